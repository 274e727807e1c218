"""`evalkit agreement`: agreement between raters in ratings files (kappas, alpha, bootstrap intervals)."""

from __future__ import annotations

import argparse
import json

from evalkit.cli._args import EXIT_OK, EXIT_USAGE, positive


def _levels(text: str) -> list[int | str]:
    """``1,2,3`` -> [1, 2, 3]; a level that is not an integer stays a string label."""
    parts = [x.strip() for x in text.split(",")]
    if len(parts) < 2 or not all(parts):
        raise argparse.ArgumentTypeError(
            f"expected two or more comma-separated levels, lowest first, not {text!r}"
        )
    return [int(x) if x.lstrip("+-").isdigit() else x for x in parts]


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "agreement",
        help="agreement between raters in ratings files: kappa, pi, alpha, with bootstrap intervals",
        description="Per pair of raters, on the items both rated: percent agreement, Cohen's kappa with its "
        "percentile bootstrap interval (resampling items, seeded), Scott's pi, quadratic weighted kappa "
        "(ordinal scale) and the confusion counts; Krippendorff's alpha over all the raters named. A null "
        "rating is missing: counted per rater and left out of every pair. See docs/judge-trust.md.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="ratings files (JSONL: item, rater, value, ...)")
    p.add_argument(
        "--raters",
        default=None,
        metavar="A,B[,C]",
        help="the raters to compare, comma-separated, at least two (default: every rater in the files)",
    )
    p.add_argument(
        "--scale",
        choices=["nominal", "ordinal"],
        default=None,
        help="nominal labels, or ordinal (adds weighted kappa; alpha uses the ordinal metric) (default nominal, "
        "or ordinal with --levels)",
    )
    p.add_argument(
        "--levels",
        type=_levels,
        default=None,
        metavar="L1,L2,...",
        help="declare the ordinal scale, lowest first, used levels or not (e.g. 1,2,3,4,5): weighted kappa and "
        "alpha use its distances; a rating outside it is an error (default: the labels present)",
    )
    p.add_argument(
        "--by",
        choices=["slice", "criterion"],
        default=None,
        help="also report each slice or criterion on its own (default: none, everything together)",
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--n-boot", type=positive, default=1000, metavar="N", help="bootstrap resamples (default 1000)"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="write one JSON object to stdout instead of the table (default off)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from evalkit.calibration import agreement_from_files, format_agreement

    raters = None
    if args.raters:
        raters = [r.strip() for r in args.raters.split(",") if r.strip()]
        if len(raters) < 2:
            print(
                "evalkit agreement: --raters needs at least two names, e.g. --raters human,judge",
                file=sys.stderr,
            )
            return EXIT_USAGE
    result = agreement_from_files(
        args.files,
        raters=raters,
        scale=args.scale,
        by=args.by,
        n_boot=args.n_boot,
        seed=args.seed,
        levels=args.levels,
    )
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        print(format_agreement(result))
    return EXIT_OK
