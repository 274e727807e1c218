"""`evalkit ab`: is run B better than run A? A pairwise judge on every case both answered, in both orders."""

from __future__ import annotations

import argparse
import json

from evalkit.cli._args import EXIT_OK, positive
from evalkit.errors import EvalkitError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "ab",
        help="is run B better than run A? pairwise judge in both orders, B's win rate with an interval "
        "(three or more runs: a Bradley-Terry ranking)",
        description="Compare two runs of one suite case by case. For every case both runs answered, the "
        "pairwise judge sees both outputs in both orders (through the response cache); the case goes to B or A "
        "when both orders pick it, else it is a tie (the judge said tie, or the orders disagreed, which cancels "
        "a position bias). Code checks go first: a case where one side fails a code check and the other passes "
        "is decided without a judge call and reported apart. Prints B's win rate (wins / (wins + losses), ties "
        "left out) with its 95 percent Wilson interval, the ties, the position consistency, the exact two-sided sign "
        "test on wins against losses, and the same per slice. Exit 0; 2 on bad input.",
    )
    p.add_argument("run_a", metavar="RUN_A", help="run A's directory or s3:// URL (the reference)")
    p.add_argument("run_b", metavar="RUN_B", help="run B's directory or s3:// URL (the challenger)")
    p.add_argument(
        "more",
        nargs="*",
        metavar="RUN",
        help="more runs: every pair is compared, and the runs are ranked by a Bradley-Terry model with "
        "bootstrap intervals",
    )
    p.add_argument(
        "--check", metavar="NAME", help="judge on this judge check's rubric only (default: all of them)"
    )
    p.add_argument(
        "--criteria",
        action="append",
        default=[],
        metavar="TEXT",
        help="judge on this criterion instead of the suite's rubric (may be given more than once; default: the rubric of the judge checks)",
    )
    p.add_argument(
        "--judge-model", metavar="M", help="the pairwise judge's model (default: the suite's judge)"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write one self-contained page: B's win rate per slice with intervals, and each slice's cases "
        "(a click opens them) with both outputs and the judge's reasons in both orders (two runs only)",
    )
    p.add_argument(
        "--cache",
        default="readwrite",
        choices=["readwrite", "replay", "refresh", "off"],
        help="response cache mode for the judge's calls (default readwrite)",
    )
    p.add_argument("--cache-dir", metavar="DIR", help="response cache directory (default: evalkit's cache)")
    p.add_argument("--concurrency", type=positive, default=8, help="judge calls at once (default 8)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.api import load_run, rank_runs

    options = {
        "check": args.check,
        "criteria": args.criteria,
        "judge_model": args.judge_model,
        "cache": args.cache,
        "cache_dir": args.cache_dir,
        "concurrency": args.concurrency,
    }
    if not args.more:
        result = load_run(args.run_a).ab(load_run(args.run_b), **options)
        print(json.dumps(result.to_json(), indent=2) if args.json else result.text())
        if args.html:
            page = result.save(args.html)
            if not args.json:
                print(f"  page: {page}")
        return EXIT_OK
    if args.html:
        raise EvalkitError("--html draws one comparison: give two runs (with more, each pair is in the text)")
    ranking, results = rank_runs([args.run_a, args.run_b, *args.more], **options)
    if args.json:
        pairs = [r.to_json() for r in results.values()]
        print(json.dumps({"ranking": ranking.rows, "method": ranking.method, "pairs": pairs}, indent=2))
    else:
        print("\n\n".join([ranking.text(), *(r.text() for r in results.values())]))
    return EXIT_OK
