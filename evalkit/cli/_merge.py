"""`evalkit merge`: the shard runs of one suite joined into one run."""

from __future__ import annotations

import argparse

from evalkit.cli._args import EXIT_OK


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "merge",
        help="join the runs of --shard 1/N ... N/N into one run (then gate or report it as any run)",
        description="Join shard runs (evalkit run SUITE --shard I/N, one per job of a CI matrix) into one complete "
        "run in --out. Every part must be complete, of the same suite version, system, judge and repeats, and "
        "together they must hold each case exactly once: a part that overlaps another, a missing shard or a "
        "part that disagrees is refused with what to do, and nothing is written. Exit 0; 2 on bad input.",
    )
    p.add_argument("parts", nargs="+", metavar="RUN", help="the shard runs' directories or s3:// URLs")
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="where the merged run goes (a new or empty folder, or an s3:// URL)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.api import merge_runs

    merged = merge_runs(args.parts, args.out)
    print(f"merged {len(args.parts)} shard runs into {merged.location}: run {merged.id}")
    print(merged.summary(show_failures=0))
    print(f"next: evalkit gate {merged.location} --baseline BASELINE")
    return EXIT_OK
