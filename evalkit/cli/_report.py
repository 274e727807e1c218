"""`evalkit report`: summarise a run, compare it with a baseline, write an HTML report."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli._args import EXIT_OK, add_show_failures, positive


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "report",
        help="summarise a run, compare it with a baseline, write an HTML report",
        description="Print a run's summary and the paired change against its baseline (the suite's baseline.json, or --baseline): the difference "
        "with its 95% interval and McNemar's exact p, the flipped cases, and the slices that moved. When both "
        "sides share a suite version and prompt but resolved to different model versions, that comes first. "
        "For judged checks it says whether the judge is calibrated (the suite's [judge] min_kappa against "
        "the record `evalkit calibrate` wrote) and gives the pass rate corrected by human labels of the run's "
        "outputs (PPI++) beside the judge-only rate. --html writes one self-contained file (inline SVG charts, a table of every failing case that filters and sorts with a small inline script and shows without it; opens offline).",
    )
    p.add_argument("run", metavar="RUN", help="run directory (runs/<run-id>/) or its s3:// URL")
    p.add_argument(
        "--baseline",
        default=None,
        metavar="RUN_OR_BASELINE_JSON",
        help="compare with this run directory or baseline.json (default: the suite's baseline.json, when it has "
        "one)",
    )
    p.add_argument(
        "--no-baseline",
        action="store_true",
        help="report the run alone, without comparing it with the suite's baseline.json",
    )
    p.add_argument(
        "--html", default=None, metavar="FILE", help="write the HTML report here (default: none, text only)"
    )
    p.add_argument(
        "--max-flipped",
        type=positive,
        default=200,
        metavar="N",
        help="flipped cases listed in the HTML report, regressions first (default 200; the count is always shown)",
    )
    p.add_argument(
        "--labels",
        action="append",
        default=None,
        metavar="FILE",
        help="human labels of the run's outputs, for the judged checks' corrected pass rates (repeatable; "
        "default: every *.jsonl in the suite's labels/ folder, where `evalkit calibrate` keeps its record)",
    )
    add_show_failures(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit import api

    done = api.load_run(args.run)
    made = done.report(
        baseline=args.baseline, labels=args.labels, max_flipped=args.max_flipped, compare=not args.no_baseline
    )
    print(made.text(show_failures=args.show_failures))
    if args.html:
        made.save(Path(args.html))
        print(f"  HTML report written to {args.html}")
    return EXIT_OK
