"""`evalkit gate`: exit 1 when a run's pass rate dropped below its baseline."""

from __future__ import annotations

import argparse

from evalkit.cli._args import EXIT_FAIL, EXIT_OK, add_gate_loosening, fraction, judge_calibration


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "gate",
        help="exit 1 when a run's pass rate dropped below its baseline",
        description="Compare a finished run with its baseline on the case ids both share and exit 1 when the "
        "pass rate dropped by more than --max-drop (with --require-significant: and McNemar's exact test "
        "calls the drop significant at alpha 0.05). It fails closed: baseline cases the run errored on, left "
        "unscored (a judge that did not run) or lacks, and a different suite version, fail it too, each named "
        "with its fix. Exit 0 otherwise; 2 on bad input (missing or unreadable files, an unfinished run, a "
        "baseline of another suite).",
    )
    p.add_argument("run", metavar="RUN", help="run directory (runs/<run-id>/)")
    p.add_argument("--baseline", required=True, metavar="BASELINE", help="baseline.json or a run directory")
    p.add_argument(
        "--max-drop",
        type=fraction,
        default=0.02,
        metavar="FRACTION",
        help="largest allowed drop in pass rate, as a fraction (default 0.02 = 2 points)",
    )
    p.add_argument(
        "--require-significant",
        action="store_true",
        help="fail only when the drop is also significant (McNemar exact p < 0.05)",
    )
    p.add_argument(
        "--junit",
        default=None,
        metavar="FILE",
        help="write JUnit XML, one test per case (failure message: the failing checks)",
    )
    add_gate_loosening(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit._gate import run_gate
    from evalkit._results import load_run

    outcome = run_gate(
        args.run,
        args.baseline,
        max_drop=args.max_drop,
        require_significant=args.require_significant,
        junit=args.junit,
        allow_unscored=args.allow_unscored,
        allow_version_change=args.allow_version_change,
        require_calibrated=args.require_calibrated,
        calibration=judge_calibration(load_run(args.run)[0].suite_path),
    )
    print(outcome.text)
    return EXIT_FAIL if outcome.decision.failed else EXIT_OK
