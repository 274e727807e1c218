"""`evalkit run`: run suites against a system and print a summary."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalkit._gate import DEFAULT_MAX_DROP
from evalkit.cli._args import (
    CACHE_DIR_HELP,
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    add_gate_loosening,
    add_show_failures,
    expand,
    fraction,
    non_negative,
    positive,
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "run",
        help="run suites against a system and print a summary",
        description="Run every case of a suite (x repeats) through a system, grade it cheapest-first, and journal "
        "the results to runs/<run-id>/ (manifest.json, results.jsonl, results.parquet). A folder of suites "
        "(like goldens/) runs each suite in it, one run directory each. An interrupted run "
        "resumes with --resume without redoing finished cases. Claude calls go through the response cache, "
        "so a rerun is free. Exit 0 when every run finished; 1 when a run could score no check because every "
        "check errored, when a --gate failed, or (with --fail-on-error) when any case errored; 2 on bad input; "
        "3 when a run stopped for money (its --max-cost, or the account's spend limit): resume it as it says.",
    )
    p.add_argument(
        "suites",
        nargs="*",
        metavar="SUITE",
        help="suite folder, .jsonl file, or a folder of suites (each suite in it is run); none with --resume",
    )
    p.add_argument(
        "--system",
        default=None,
        help="baseline (the suite's baseline.py), claude (the suite's prompt.md), or module:function / file.py:function "
        "(default: the suite's default_system)",
    )
    p.add_argument(
        "--repeats",
        type=positive,
        default=None,
        help="runs per case, for the noise floor (default 1; with --resume, the run's own)",
    )
    p.add_argument(
        "--concurrency",
        type=positive,
        default=None,
        help="cases in flight at once (default 8; with --resume, the run's own)",
    )
    p.add_argument(
        "--cache",
        choices=["readwrite", "replay", "refresh", "off"],
        default=None,
        help="response cache mode: readwrite (default; with --resume, the run's own), replay (read only; a miss "
        "is an error), refresh, off",
    )
    p.add_argument("--cache-dir", default=None, help=CACHE_DIR_HELP)
    p.add_argument(
        "--judge",
        choices=["auto", "on", "off"],
        default=None,
        help="run judge checks: auto (the default: when ANTHROPIC_API_KEY is set, or --cache replay reads recorded "
        "verdicts; with --resume, the run's own), on, off",
    )
    p.add_argument(
        "--batch",
        action="store_true",
        help="send uncached requests through the Message Batches API (default: off, one call per request; with "
        "--resume: if the run was a batch run, its batches are collected, not submitted again)",
    )
    p.add_argument(
        "--prompt-cache",
        choices=["on", "off", "5m", "1h"],
        default=None,
        help="mark each request's stable prefix (system prompt, tools) for the API's prompt cache, where it reaches "
        "the model's minimum cacheable length: later calls read it at 0.1x the input price. on (default: the "
        "suite's prompt_cache; 5-minute entries, 1-hour ones with --batch), off, or a lifetime. Answers and "
        "response-cache keys are the same either way",
    )
    p.add_argument(
        "--max-cost",
        type=_dollars,
        default=None,
        metavar="USD",
        help="stop sending before the run could spend more than USD in all (each call's worst case is held "
        "until it is answered; a batch is not submitted past it). The run stops with exit 3 and the --resume "
        "command, which takes a higher --max-cost. Default: no cap (with --resume: the run's own)",
    )
    p.add_argument(
        "--shard",
        type=_shard,
        default=None,
        metavar="I/N",
        help="run only shard I of N of each suite: cases split by a hash of their id, the same on every machine, "
        "so N jobs (a CI matrix) share the work; join their runs with `evalkit merge` before a gate (a shard alone "
        "is missing cases, which a gate refuses)",
    )
    p.add_argument("--max-retries", type=non_negative, default=4, help="retries per API call (default 4)")
    p.add_argument(
        "--processes",
        type=positive,
        default=None,
        help="worker processes for model calls (default: one per 16 cases in flight, --concurrency // 16, at "
        "most the cores + 1; one process below --concurrency 32)",
    )
    p.add_argument(
        "--out",
        default=None,
        help="run directory (default runs/<run-id>), or a store URL s3://bucket/prefix/<name> to publish it to",
    )
    p.add_argument(
        "--runs-dir",
        default="runs",
        help="where new run directories go (default runs/), or a store URL s3://bucket/runs: the run journals in "
        "a local copy (.evalkit/store/...) and is published when it finishes or stops (credentials and endpoint "
        "from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL)",
    )
    p.add_argument(
        "--resume",
        default=None,
        metavar="RUN_DIR",
        help="finish an interrupted run, or run its errored cases again, with the run's own settings (a folder, "
        "or the run's store URL: pulled, finished, published again)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar (default: one on stderr)")
    p.add_argument(
        "--report",
        action="store_true",
        help="also write report.html into the run directory (default off; judged checks are read against the "
        "labels in the suite's labels/ folder)",
    )
    add_show_failures(p)
    add_gate_loosening(p)
    p.add_argument(
        "--gate",
        action="store_true",
        help="also gate each run against its suite's baseline.json (exit 1 when any suite regressed)",
    )
    p.add_argument(
        "--max-drop",
        type=fraction,
        default=DEFAULT_MAX_DROP,
        metavar="FRACTION",
        help=f"the gate's tolerated drop in pass rate, as a fraction (default {DEFAULT_MAX_DROP:g} = "
        f"{100 * DEFAULT_MAX_DROP:g} points)",
    )
    p.add_argument(
        "--fail-on-error",
        action="store_true",
        help="exit 1 when any case ended in an error (default: errors are listed with the --resume command that "
        "runs them again, and exit 1 only when every check errored)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="send nothing but count_tokens: estimate tokens and dollars per grader kind (offline: by characters)",
    )
    p.set_defaults(func=run, run_parser=p)


def _shard(text: str) -> tuple[int, int]:
    index, _, of = text.partition("/")
    try:
        found = int(index), int(of)
    except ValueError:
        found = (0, 0)
    if not 1 <= found[0] <= found[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: give I/N with 1 <= I <= N, e.g. 2/3")
    return found


def _dollars(text: str) -> float:
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of dollars (e.g. 5 or 0.50)")
    return value


def run(args: argparse.Namespace) -> int:
    from evalkit import api
    from evalkit.errors import SuiteValidationError
    from evalkit.suite import load_suite

    if not args.suites and not args.resume:
        args.run_parser.print_usage(sys.stderr)
        print(
            "evalkit run: error: give a SUITE (a suite folder, a .jsonl file or a folder of suites), "
            "or --resume RUN_DIR",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not args.dry_run and not args.resume:
        api.prepare(args.system, cache=args.cache or "readwrite", cache_dir=args.cache_dir, batch=args.batch)
    paths = expand(args.suites)
    if args.resume:
        if len(paths) > 1:
            print("--out and --resume take one suite at a time", file=sys.stderr)
            return EXIT_USAGE
        done = api.resume(
            args.resume,
            suite=paths,
            system=args.system,
            repeats=args.repeats,
            judge=args.judge,
            out=args.out,
            cache=args.cache,
            cache_dir=args.cache_dir,
            concurrency=args.concurrency,
            batch=args.batch,
            max_retries=args.max_retries,
            processes=args.processes,
            progress=not args.quiet,
            prompt_cache=args.prompt_cache,
            max_cost=args.max_cost,
        )
        return _after(done, args)
    if len(paths) > 1 and args.out:
        print("--out and --resume take one suite at a time", file=sys.stderr)
        return EXIT_USAGE
    # every suite is loaded, and its system found, before any runs: a bad one among several stops them all
    problems = []
    loaded = []
    for path in paths:
        try:
            suite = load_suite(path)
        except SuiteValidationError as exc:
            problems.extend(exc.problems)
            continue
        loaded.append((suite, api.as_run_system(args.system, suite)))
    if problems:
        raise SuiteValidationError(problems)
    options = {
        "repeats": args.repeats or 1,
        "cache": args.cache or "readwrite",
        "cache_dir": args.cache_dir,
        "judge": args.judge or "auto",
        "batch": args.batch,
        "max_retries": args.max_retries,
    }
    status = EXIT_OK
    for suite, system in loaded:
        if args.dry_run:
            print(api.estimate(suite, system, max_cost=args.max_cost, **options))
            continue
        done = api.run(
            suite,
            system,
            concurrency=args.concurrency or 8,
            out=args.out,
            runs_dir=args.runs_dir,
            processes=args.processes,
            progress=not args.quiet,
            prompt_cache=args.prompt_cache,
            max_cost=args.max_cost,
            shard=args.shard,
            **options,
        )
        status = max(status, _after(done, args))
    return status


def _after(done: Any, args: argparse.Namespace) -> int:
    """A finished run's summary, exit status, gate and report, as the options ask."""
    from evalkit.errors import EvalkitError

    status = EXIT_OK
    print(done.summary(show_failures=args.show_failures))
    print(f"  run saved to {done.location}" + (f" (local copy {done.path})" if done.url else ""))
    errored = done.errored_cases
    if errored:
        print(
            f"  to run the {errored} errored case{'s' if errored > 1 else ''} again: evalkit run --resume {done.location}"
        )
    failure = done.failed_because(fail_on_error=args.fail_on_error)
    if failure:
        print(f"  exit 1: {failure}")
        status = EXIT_FAIL
    gate = None
    if args.gate:  # first, so the HTML report can show its verdict
        baseline = done.baseline_path
        if baseline is None:
            print(
                f"  gate: no {done.suite.base_dir / 'baseline.json'}; accept one with `evalkit baseline accept {done.location}`"
            )
            status = EXIT_FAIL
        else:
            try:
                gate = done.gate(
                    baseline=baseline,
                    max_drop=args.max_drop,
                    allow_unscored=args.allow_unscored,
                    allow_version_change=args.allow_version_change,
                    require_calibrated=args.require_calibrated,
                )
            except EvalkitError as exc:  # this suite's gate cannot judge; the other suites still run
                print(f"  gate: {exc}")
                status = max(status, EXIT_USAGE)
            else:
                print("  " + gate.text.replace("\n", "\n  "))
                status = max(status, gate.exit_code)
    if args.report:
        html_path = done.report(gate=gate).save(done.path / "report.html")
        if done.url:
            from evalkit.api import republish

            republish(done)  # the report goes with the run
            print(f"  report: {html_path} (published with the run to {done.url})")
        else:
            print(f"  report: {html_path}")
    print()
    return status
