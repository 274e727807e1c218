"""`evalkit review sample`: draw judged outputs for people to label, stratified by slice and judge verdict."""

from __future__ import annotations

import argparse

from evalkit.cli._args import EXIT_OK, positive


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "review",
        help="draw a stratified sample of judged outputs for people to label",
        description="sample: draws N judged outputs of a run, stratified by (slice, judge verdict: pass, fail, "
        "not judged) with proportional allocation (largest remainder) and at least one from every non-empty "
        "stratum when N allows, seeded; writes them as a labels file of unlabelled entries (passed null) that "
        "the notebook Labeller opens: Labeller(review_items(run, FILE), FILE, rater=NAME).",
    )
    p.add_argument("action", choices=["sample"], help="sample: draw the outputs and write the labels file")
    p.add_argument("run", metavar="RUN", help="run directory (runs/<run-id>/) or its s3:// URL")
    p.add_argument(
        "--n", type=positive, default=30, help="outputs to draw (default 30; all when the run has fewer)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--out", required=True, metavar="FILE", help="labels file to write (required; must not exist)"
    )
    p.add_argument(
        "--rater",
        type=_name,
        default="reviewer",
        metavar="NAME",
        help="who will label them (default reviewer)",
    )
    p.add_argument(
        "--check", default=None, metavar="NAME", help="only this judged check (default: every one)"
    )
    p.set_defaults(func=run)


def _name(text: str) -> str:
    """--rater: a name with something in it (it goes into every label the file holds)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give a name, e.g. --rater ana (it is written into every label)")
    return text.strip()


def run(args: argparse.Namespace) -> int:
    import polars as pl

    from evalkit.api import load_run
    from evalkit.calibration import review_sample, write_review_sample
    from evalkit.errors import EvalkitError

    loaded = load_run(args.run)
    if args.check is not None:
        rows = loaded.checks()
        judged = sorted(
            set(rows.filter(pl.col("check_kind") == "judge").get_column("check_name").drop_nulls())
        )
        if args.check not in judged:
            raise EvalkitError(
                f"run {loaded.id} has no judged check named {args.check!r}; its judged checks are "
                f"{', '.join(judged) if judged else 'none'} (or leave out --check for every one)"
            )
    sample = review_sample(loaded, args.n, seed=args.seed, check=args.check)
    path = write_review_sample(sample, args.out, rater=args.rater)
    total = sum(s.size for s in sample.strata)
    print(
        f"{len(sample.items)} of {total} judged outputs of run {loaded.id} drawn into {path} (rater {args.rater})"
    )
    width = max(len(s.slice) for s in sample.strata)
    print(f"  {'slice'.ljust(width)}  {'judge verdict':<13}  outputs  drawn")
    for s in sample.strata:
        print(f"  {s.slice.ljust(width)}  {s.verdict:<13}  {s.size:>7}  {s.drawn:>5}")
    print(f"method: {sample.method}; seed {sample.seed}")
    return EXIT_OK
