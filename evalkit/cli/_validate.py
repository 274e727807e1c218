"""`evalkit validate`: check golden suites and print their version and counts."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli._args import EXIT_OK, EXIT_USAGE, expand


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "validate",
        help="check golden suites and print their version and counts",
        description="Read every line of each suite and report every problem as path:line: field: message. "
        "Exit 0 when all are valid, 2 when any is not. Nothing is written.",
    )
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="suite folder, .jsonl file, or a folder of suites"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.suite import validate_suite

    paths = expand(args.paths)
    total_problems = 0
    for path in paths:
        suite, problems = validate_suite(path)
        if problems:
            total_problems += len(problems)
            for problem in problems:
                print(problem, file=sys.stderr)
            continue
        assert suite is not None
        slices = ", ".join(f"{name} {n}" for name, n in suite.slice_counts().items())
        holdout = sum(1 for c in suite.cases if c.split == "holdout")
        print(
            f"{path}: ok — suite {suite.name} version {suite.version}, {len(suite.cases)} cases ({holdout} holdout)"
        )
        print(f"  slices: {slices}")
        for warning in suite.warnings:
            print(f"  warning: {warning}")
    if total_problems:
        n = total_problems
        print(
            f"\n{n} problem{'s' if n != 1 else ''}; nothing was written. Fix them and run again.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return EXIT_OK
