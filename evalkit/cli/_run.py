"""`evalkit run`: run suites against a system and print a summary."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

from evalkit.cli._args import (
    CACHE_DIR_HELP,
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    add_gate_loosening,
    add_show_failures,
    expand,
    fraction,
    judge_calibration,
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
        "check errored, when a --gate failed, or (with --fail-on-error) when any case errored; 2 on bad input.",
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
    p.add_argument("--max-retries", type=non_negative, default=4, help="retries per API call (default 4)")
    p.add_argument(
        "--processes",
        type=positive,
        default=None,
        help="worker processes for model calls (default: one per 16 cases in flight, --concurrency // 16, at "
        "most the cores + 1; one process below --concurrency 32)",
    )
    p.add_argument("--out", default=None, help="run directory (default runs/<run-id>)")
    p.add_argument("--runs-dir", default="runs", help="where new run directories go (default runs/)")
    p.add_argument(
        "--resume",
        default=None,
        metavar="RUN_DIR",
        help="finish an interrupted run, or run its errored cases again, with the run's own settings",
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
        default=0.02,
        metavar="FRACTION",
        help="the gate's tolerated drop in pass rate, as a fraction (default 0.02 = 2 points)",
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


def _preload_sdk(args: argparse.Namespace) -> None:
    """Start importing the SDK in the background when the run is sure to call Claude: it loads while the suite
    does and the run directory is made, instead of after them."""
    if args.dry_run or args.resume or args.batch or args.system != "claude":
        return
    cache = args.cache or "readwrite"
    if cache == "readwrite":
        from evalkit._cache import default_cache_dir

        directory = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
        try:
            with os.scandir(directory) as entries:
                if next(entries, None) is not None:
                    return  # it may answer every request: the runner looks before it loads the SDK
        except OSError:
            pass  # no cache yet: every request is a call
    elif cache == "replay":
        return
    from evalkit._client import preload

    preload()


class _Prefetch:
    """Given each result as it is recorded: the first starts importing what the summary needs (the report),
    which the run's calls leave time for. Joined before another run starts, which may fork."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None

    def __call__(self, result: Any) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._load, daemon=True, name="evalkit-prefetch")
            self._thread.start()

    @staticmethod
    def _load() -> None:
        with contextlib.suppress(Exception):  # what fails to import fails again where it is used
            import evalkit._report._summary  # noqa: F401

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()


def run(args: argparse.Namespace) -> int:
    _preload_sdk(args)

    import polars as pl

    from evalkit._results import load_run
    from evalkit._runner import Runner, RunOptions
    from evalkit._systems import load_system
    from evalkit.errors import EvalkitError, SuiteValidationError
    from evalkit.suite import load_suite

    if args.resume:
        from evalkit._results import RunDir
        from evalkit._runner._resume import resume_conflicts

        manifest = RunDir(Path(args.resume)).read_manifest()
        paths = [Path(manifest.suite_path)]
        conflicts = resume_conflicts(
            manifest,
            Path(args.resume),
            suite_paths=expand(args.suites),
            system=args.system,
            repeats=args.repeats,
            judge=args.judge,
            out=Path(args.out) if args.out is not None else None,
        )
        if conflicts:
            print(
                f"--resume {args.resume}: {'; '.join(conflicts)}. A resumed run keeps its own settings: drop "
                "those options, or start a new run",
                file=sys.stderr,
            )
            return EXIT_USAGE
        # the run's own settings, so the cases left are run as the others were
        args.system = manifest.system.get("name", args.system)
        args.repeats = manifest.repeats
        # a batch run resumed with --cache replay (or off) reads what its batches put in the cache
        args.batch = args.batch or (manifest.batch and args.cache in (None, "readwrite"))
        args.cache = args.cache or manifest.cache.get("mode")
        args.judge = args.judge or ("on" if manifest.judge else "off")
        if args.concurrency is None:
            args.concurrency = manifest.concurrency
        # the responses already paid for are in the run's own cache: resuming elsewhere would pay again
        if args.cache_dir is None and manifest.cache.get("directory"):
            args.cache_dir = manifest.cache["directory"]
    elif not args.suites:
        args.run_parser.print_usage(sys.stderr)
        print(
            "evalkit run: error: give a SUITE (a suite folder, a .jsonl file or a folder of suites), "
            "or --resume RUN_DIR",
            file=sys.stderr,
        )
        return EXIT_USAGE
    else:
        paths = expand(args.suites)
    if args.concurrency is None:
        args.concurrency = 8
    args.repeats = args.repeats or 1
    args.cache = args.cache or "readwrite"
    args.judge = args.judge or "auto"
    status = EXIT_OK
    if len(paths) > 1 and (args.out or args.resume):
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
        loaded.append((suite, load_system(args.system, suite)))
    if problems:
        raise SuiteValidationError(problems)
    prefetch = _Prefetch()
    for suite, system in loaded:
        if args.dry_run:
            print(_dry_run(suite, system, args))
            continue
        options = RunOptions(
            repeats=args.repeats,
            concurrency=args.concurrency,
            cache_mode=args.cache,
            cache_dir=Path(args.cache_dir) if args.cache_dir else None,
            out_root=Path(args.runs_dir),
            run_dir=Path(args.out) if args.out else None,
            judge=args.judge,
            progress=not args.quiet,
            batch=args.batch,
            max_retries=args.max_retries,
            processes=args.processes,
        )
        runner = Runner(suite, system, options)
        prefetch.join()
        outcome = runner.run(resume=Path(args.resume) if args.resume else None, on_result=prefetch)
        manifest, rows = load_run(outcome.run_dir)
        from evalkit._report import format_summary, judge_criteria

        judge = None
        if (rows.get_column("tier") == "judge").any():  # a run with no judged check imports no calibration
            from evalkit.calibration import judge_trust

            judge = judge_trust(rows, suite=suite)
        print(
            format_summary(
                manifest,
                rows,
                show_failures=args.show_failures,
                criteria=judge_criteria(outcome.run_dir),
                judge=judge,
            )
        )
        print(f"  run saved to {outcome.run_dir}")
        errored = rows.filter(pl.col("case_status") == "error").select("case_id", "repeat").n_unique()
        if errored:
            print(
                f"  to run the {errored} errored case{'s' if errored > 1 else ''} again: evalkit run --resume {outcome.run_dir}"
            )
        failure = _failed_run(rows, errored, fail_on_error=args.fail_on_error)
        if failure:
            print(f"  exit 1: {failure}")
            status = max(status, EXIT_FAIL)
        baseline = suite.base_dir / "baseline.json"
        gate = None
        if args.gate:  # first, so the HTML report can show its verdict
            if not baseline.exists():
                print(f"  gate: no {baseline}; accept one with `evalkit baseline accept {outcome.run_dir}`")
                status = max(status, EXIT_FAIL)
            else:
                from evalkit._gate import run_gate

                try:
                    gate = run_gate(
                        outcome.run_dir,
                        baseline,
                        max_drop=args.max_drop,
                        allow_unscored=args.allow_unscored,
                        allow_version_change=args.allow_version_change,
                        require_calibrated=args.require_calibrated,
                        calibration=judge_calibration(manifest.suite_path),
                    )
                except EvalkitError as exc:  # this suite's gate cannot judge; the other suites still run
                    print(f"  gate: {exc}")
                    status = max(status, EXIT_USAGE)
                else:
                    print("  " + gate.text.replace("\n", "\n  "))
                    status = max(status, gate.exit_code)
        if args.report:
            from evalkit._baseline import load_reference
            from evalkit._fs import atomic_write_text
            from evalkit._report import build_report, render_html

            reference = load_reference(baseline) if baseline.exists() else None
            html_path = outcome.run_dir / "report.html"
            report = build_report(manifest, rows, reference, run_dir=outcome.run_dir, judge=judge)
            atomic_write_text(html_path, render_html(report, gate=gate))
            print(f"  report: {html_path}")
        print()
    return status


def _dry_run(suite: Any, system: Any, args: argparse.Namespace) -> str:
    from evalkit._runner import estimate_run

    count = None
    if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL"):
        from evalkit._client import Client

        count = Client(max_retries=args.max_retries).count_tokens
    from evalkit._cache import ResponseCache

    judge = None if args.judge == "off" else suite.config.judge
    # the run will find what the cache holds: the estimate counts it as free too
    cache = None if args.cache in ("off", "refresh") else ResponseCache(args.cache_dir, mode=args.cache)
    return estimate_run(
        suite, system, repeats=args.repeats, judge=judge, count_tokens=count, batch=args.batch, cache=cache
    ).format()


def _failed_run(rows: Any, errored: int, *, fail_on_error: bool) -> str | None:
    """Why a finished run exits 1 though no gate was asked for, or None.

    A run that scored nothing because every check errored measured nothing: a pass rate over no cases must not
    read as a green build. Some errors among scored cases are listed and resumable, so they fail the run only
    when asked (--fail-on-error)."""
    statuses = rows.get_column("status")
    scored = int(statuses.is_in(["pass", "fail"]).sum())
    if scored == 0 and int((statuses == "error").sum()) > 0:
        return "no check could be scored: every check errored (the errors are listed above)"
    if fail_on_error and errored:
        cases = f"{errored} case{'s' if errored > 1 else ''}"
        return f"{cases} ended in an error and --fail-on-error was given"
    return None
