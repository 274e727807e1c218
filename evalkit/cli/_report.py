"""`evalkit report`: summarise a run, compare it with a baseline, write an HTML report."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli._args import EXIT_OK, add_show_failures, positive


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "report",
        help="summarise a run, compare it with a baseline, write an HTML report",
        description="Print a run's summary and, with --baseline, the paired change against it: the difference "
        "with its 95% interval and McNemar's exact p, the flipped cases, and the slices that moved. When both "
        "sides share a suite version and prompt but resolved to different model versions, that comes first. "
        "For judged checks it says whether the judge is calibrated (the suite's [judge] min_kappa against "
        "the record `evalkit calibrate` wrote) and gives the pass rate corrected by human labels of the run's "
        "outputs (PPI++) beside the judge-only rate. --html writes one self-contained file (inline SVG charts, a table of every failing case that filters and sorts with a small inline script and shows without it; opens offline).",
    )
    p.add_argument("run", metavar="RUN", help="run directory (runs/<run-id>/)")
    p.add_argument(
        "--baseline",
        default=None,
        metavar="RUN_OR_BASELINE_JSON",
        help="compare with this run directory or baseline.json (default: none, the run alone)",
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
    from evalkit._baseline import load_reference
    from evalkit._fs import atomic_write_text
    from evalkit._report import build_report, format_report, render_html
    from evalkit._results import load_run

    manifest, rows = load_run(args.run)
    reference = load_reference(args.baseline) if args.baseline else None
    judge = None
    if (rows.get_column("tier") == "judge").any():  # only a judged run pays for reading labels
        from evalkit.calibration import judge_trust

        judge = judge_trust(rows, suite_path=manifest.suite_path, labels=args.labels)
    report = build_report(manifest, rows, reference, run_dir=args.run, judge=judge)
    print(format_report(report, show_failures=args.show_failures))
    if args.html:
        atomic_write_text(Path(args.html), render_html(report, max_flipped=args.max_flipped))
        print(f"  HTML report written to {args.html}")
    return EXIT_OK
