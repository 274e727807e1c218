"""`evalkit probe position`: a pairwise judge's position consistency and bias, from a verdicts file."""

from __future__ import annotations

import argparse
import json

from evalkit.cli._args import EXIT_OK


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "probe",
        help="probe a judge's biases from recorded verdicts (position)",
        description="position: from pairwise verdicts in both orders (JSONL: item, judge, shown_first, winner), "
        "the share of items with the same winner in both orders (Wilson interval) and the position bias, "
        "P(A wins | A first) - P(A wins | A second) on items decisive in both orders (Newcombe's paired "
        "interval, McNemar's exact p). Null winners are counted as missing. See docs/judge-trust.md.",
    )
    p.add_argument("probe", choices=["position"], help="the probe to run (position is the only one so far)")
    p.add_argument("file", metavar="FILE", help="pairwise verdicts file")
    p.add_argument(
        "--judge",
        default=None,
        metavar="NAME",
        help="the judge to probe (default: the only judge in the file; required when there are several)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="write one JSON object to stdout instead of the text (default off)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.probes import format_position, position_from_file

    probe = position_from_file(args.file, judge=args.judge)
    print(json.dumps(probe.to_json(), ensure_ascii=False) if args.json else format_position(probe))
    return EXIT_OK
