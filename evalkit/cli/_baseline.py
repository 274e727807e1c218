"""`evalkit baseline accept`: accept a run as its suite's committed baseline."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli._args import EXIT_OK, print_help


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    baseline = subparsers.add_parser(
        "baseline",
        help="accept a run as its suite's committed baseline",
        description="Manage baseline.json, the committed record a gate compares against.",
    )
    bsub = baseline.add_subparsers(dest="baseline_action", metavar="ACTION")
    # `evalkit baseline` alone prints this parser's help
    baseline.set_defaults(func=run, baseline_parser=baseline)
    a = bsub.add_parser(
        "accept",
        help="write baseline.json from a finished run",
        description="Write baseline.json (score, suite name and version, one majority verdict per case and, "
        "for a run with repeats, each repeat's verdict, system and judge models with resolved versions, run id "
        "and date, and each case's first-repeat output and check details clipped to 4000 and 1000 characters) "
        "atomically, by default into the run's suite folder. Nothing else ever writes it. An existing baseline "
        "from another run is replaced only with --force, and the old and new scores are printed either way; "
        "accepting the same run again changes nothing, unless it adds the repeats' verdicts or adds or drops "
        "the outputs. Unfinished runs are refused.",
    )
    a.add_argument("run", metavar="RUN", help="finished run directory (runs/<run-id>/) or its s3:// URL")
    a.add_argument(
        "--to",
        default=None,
        metavar="PATH",
        help="where to write (default: baseline.json in the suite folder named by the run's manifest)",
    )
    a.add_argument(
        "--force",
        action="store_true",
        help="replace an existing baseline that comes from another run (default: refuse)",
    )
    a.add_argument(
        "--no-outputs",
        dest="outputs",
        action="store_false",
        help="keep verdicts only, no outputs or check details: a smaller file, but a flipped case then shows "
        "only this run's side (default: store them)",
    )


def run(args: argparse.Namespace) -> int:
    if args.baseline_action == "accept":
        return _accept(args)
    return print_help(args.baseline_parser)


def _accept(args: argparse.Namespace) -> int:
    from evalkit._baseline import accept

    done = accept(args.run, to=args.to, force=args.force, outputs=args.outputs)
    b = done.baseline
    if done.unchanged:
        print(f"{done.path} already holds the baseline of run {b.run_id}; nothing written")
        return EXIT_OK
    score = "n/a" if b.score.rate is None else f"{100 * b.score.rate:.1f}%"
    stored = "verdicts only" if b.outputs is None else f"outputs of {len(b.outputs)} cases"
    print(
        f"baseline written to {done.path}: suite {b.suite} version {b.suite_version}, run {b.run_id}, "
        f"pass rate {score} ({b.score.passes}/{b.score.scored} scored), {len(b.cases)} cases, {stored}"
    )
    if done.edited is not None:
        print(
            f"  the file there could not be trusted ({done.edited}): rewritten from the run; commit the change"
        )
    elif done.replaced is not None and done.replaced.run_id == b.run_id:
        added = ["each repeat's verdict"] if done.replaced.repeats is None and b.repeats is not None else []
        if (done.replaced.outputs is None) != (b.outputs is None):
            added.append(stored)
        print(f"  the same run as before, now with {' and '.join(added)}; commit the change")
    elif done.replaced is not None:
        old = "n/a" if done.replaced.score.rate is None else f"{100 * done.replaced.score.rate:.1f}%"
        print(f"  replaced the baseline of run {done.replaced.run_id} (pass rate {old}); commit the change")
    unscored = sum(1 for v in b.cases.values() if v == "not_scored")
    if unscored:
        print(
            f"  warning: {unscored} cases are not scored in this baseline (judge not run?); a gate cannot "
            "verify them (UNVERIFIED) until a baseline scores them: accept a run with every check on",
            file=sys.stderr,
        )
    return EXIT_OK
