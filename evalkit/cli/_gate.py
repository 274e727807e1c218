"""`evalkit gate`: exit 1 when a run's pass rate dropped below its baseline."""

from __future__ import annotations

import argparse

from evalkit._gate import ALPHA, DEFAULT_MAX_DROP
from evalkit.cli._args import add_gate_loosening, fraction


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "gate",
        help="exit 1 when a run's pass rate dropped below its baseline",
        description="Compare a finished run with its baseline on the case ids both share and exit 1 when the "
        "pass rate dropped by more than --max-drop (with --require-significant: and the paired test, McNemar's "
        "exact test or with repeats the sign-flip test on case pass rates, calls the drop significant at alpha "
        f"{ALPHA:g}). It fails closed: baseline cases the run errored on, left "
        "unscored (a judge that did not run) or lacks, and a different suite version, fail it too, each named "
        "with its fix. Exit 0 otherwise; 2 on bad input (missing or unreadable files, an unfinished run, a "
        "baseline of another suite).",
    )
    p.add_argument("run", metavar="RUN", help="run directory (runs/<run-id>/) or its s3:// URL")
    p.add_argument("--baseline", required=True, metavar="BASELINE", help="baseline.json or a run directory")
    p.add_argument(
        "--max-drop",
        type=fraction,
        default=DEFAULT_MAX_DROP,
        metavar="FRACTION",
        help=f"largest allowed drop in pass rate, as a fraction (default {DEFAULT_MAX_DROP:g} = "
        f"{100 * DEFAULT_MAX_DROP:g} points)",
    )
    p.add_argument(
        "--require-significant",
        action="store_true",
        help=f"fail only when the drop is also significant (McNemar exact p, with repeats sign-flip p, < {ALPHA:g})",
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
    from evalkit.api import gate

    outcome = gate(
        args.run,
        args.baseline,
        max_drop=args.max_drop,
        require_significant=args.require_significant,
        allow_unscored=args.allow_unscored,
        allow_version_change=args.allow_version_change,
        require_calibrated=args.require_calibrated,
        junit=args.junit,
    )
    print(outcome.text)
    return outcome.exit_code
