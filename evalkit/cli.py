"""The `evalkit` command: validate suites (run, report, gate and cache join as they land)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from evalkit import __version__
from evalkit.suite import validate_suite

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _expand(paths: Sequence[str]) -> list[Path]:
    """A folder holding suite folders (like goldens/) stands for each suite in it."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir() and not (p / "cases.jsonl").exists():
            subs = sorted(d for d in p.iterdir() if (d / "cases.jsonl").exists())
            subs += sorted(f for f in p.glob("*.jsonl"))
            out.extend(subs or [p])
        else:
            out.append(p)
    return out


def cmd_validate(args: argparse.Namespace) -> int:
    paths = _expand(args.paths)
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
    if total_problems:
        n = total_problems
        print(
            f"\n{n} problem{'s' if n != 1 else ''}; nothing was written. Fix them and run again.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Evaluate an LLM feature like a unit-test suite: golden cases, cheap-first graders, "
        "cached runs, pass rates with error bars, and a regression gate for CI.",
        epilog="Exit codes: 0 ok, 1 regression or failed gate, 2 bad input or usage.",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "validate",
        help="check golden suites and print their version and counts",
        description="Read every line of each suite and report every problem as path:line: field: message. "
        "Exit 0 when all are valid, 2 when any is not. Nothing is written.",
    )
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="suite folder, .jsonl file, or a folder of suites"
    )
    p.set_defaults(func=cmd_validate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
