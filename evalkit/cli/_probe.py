"""`evalkit probe position | verbosity | injection`: how a judge can be fooled, each with its effect and interval.

`probe position FILE` reads recorded pairwise verdicts (both orders); `--live` and the two other probes call the
judge (evalkit/cli/_probe_live.py).
"""

from __future__ import annotations

import argparse
import json

from evalkit.cli._args import EXIT_OK
from evalkit.cli._probe_live import add_live_parsers


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "probe",
        help="measure a judge's biases: position, verbosity, injection",
        description="Each probe reports its effect with an interval and the n needed to see a given effect. "
        "position: the share of items with the same winner in both orders (Wilson interval) and the position "
        "bias, P(A wins | A first) - P(A wins | A second), on items decisive in both orders (Newcombe's paired "
        "interval, McNemar's exact p), from a pairwise verdicts file or, with --live, by judging now. "
        "verbosity: the judge's pass rate on outputs and on padded copies. injection: the success rate of "
        "five attacks on outputs that fail without them. See docs/judge-trust.md.",
    )
    probes = p.add_subparsers(dest="probe", metavar="PROBE")
    position = probes.add_parser(
        "position",
        help="position consistency and bias of a pairwise judge",
        description="From a pairwise verdicts file (JSONL: item, judge, shown_first, winner); null winners count "
        "as missing. With --live, SUITE-or-PAIRS is judged in both orders first.",
    )
    position.add_argument(
        "file", metavar="FILE", help="pairwise verdicts file (with --live: a suite or pairs file)"
    )
    position.add_argument(
        "--judge",
        default=None,
        metavar="NAME",
        help="the judge to probe (default: the only judge in the file; required when there are several)",
    )
    position.add_argument(
        "--json",
        action="store_true",
        help="write one JSON object to stdout instead of the text (default off)",
    )
    position.set_defaults(func=run_file_position)
    add_live_parsers(probes)
    p.set_defaults(func=lambda _args: _usage(p))


def _usage(p: argparse.ArgumentParser) -> int:
    p.print_help()
    return 2


def run_file_position(args: argparse.Namespace) -> int:
    from evalkit.probes import format_position, position_from_file

    probe = position_from_file(args.file, judge=args.judge)
    print(json.dumps(probe.to_json(), ensure_ascii=False) if args.json else format_position(probe))
    return EXIT_OK
