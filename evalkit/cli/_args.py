"""What the subcommands share: exit codes, argparse types, suite-path expansion."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_SPENDING = 3
"""A run stopped for money: its --max-cost, or the account's spend limit."""

CACHE_DIR_HELP = (
    "cache folder (default $EVALKIT_CACHE_DIR or .evalkit/cache), or a store URL s3://bucket/cache shared by "
    "machines (read through a local copy; entries written only if absent)"
)


def expand(paths: Sequence[str]) -> list[Path]:
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


def print_help(parser: argparse.ArgumentParser) -> int:
    """A command given without its action: its help on stderr, and a usage error."""
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def fraction(text: str) -> float:
    """An argparse type: a fraction in [0, 1)."""
    value = float(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError("must be a fraction in [0, 1), e.g. 0.02 for 2 points")
    return value


def int_at_least(least: int, says: str) -> Callable[[str], int]:
    """An argparse type: an int of at least `least`."""

    def parse(text: str) -> int:
        value = int(text)
        if value < least:
            raise argparse.ArgumentTypeError(says)
        return value

    parse.__name__ = "int"  # argparse names the type in its message for text that is not a number
    return parse


positive = int_at_least(1, "must be at least 1")
non_negative = int_at_least(0, "must be 0 or more")


def show_failures(text: str) -> int | str:
    """--show-failures: a count of failing cases to list, or "all"."""
    if text == "all":
        return "all"
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or 'all', got {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {n}")
    return n


def add_show_failures(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--show-failures",
        type=show_failures,
        default=10,
        metavar="N|all",
        help="how many failing cases to list, with what failed (default 10; 'all' lists every one)",
    )


def add_gate_loosening(p: argparse.ArgumentParser) -> None:
    """The options that loosen a fail-closed gate; both are printed in its verdict and JUnit file."""
    p.add_argument(
        "--allow-unscored",
        type=int,
        default=0,
        metavar="N",
        help="tolerate up to N baseline cases the run cannot verify: errored, unscored or missing (default 0)",
    )
    p.add_argument(
        "--allow-version-change",
        action="store_true",
        help="across suite versions, compare only the cases whose content did not change (default: a changed "
        "suite version fails the gate)",
    )
    p.add_argument(
        "--require-calibrated",
        action="store_true",
        help="fail when the suite sets [judge] min_kappa and the current judge has no calibration meeting it "
        "(default: the verdict says whether judged results are calibrated, and does not fail on it)",
    )
