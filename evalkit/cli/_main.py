"""The `evalkit` command: validate, run, report, gate, baseline and cache."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evalkit._version import __version__
from evalkit.errors import EvalkitError, SuiteValidationError
from evalkit.suite import load_suite, validate_suite

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


def cmd_run(args: argparse.Namespace) -> int:
    import polars as pl

    from evalkit.report import format_summary
    from evalkit.results import load_run
    from evalkit.runner import Runner, RunOptions
    from evalkit.systems import load_system

    if args.resume:
        from evalkit.results import RunDir

        manifest = RunDir(Path(args.resume)).read_manifest()
        paths = [Path(manifest.suite_path)]
        conflicts = _resume_conflicts(args, manifest)
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
    else:
        paths = _expand(args.suites)
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
        outcome = runner.run(resume=Path(args.resume) if args.resume else None)
        manifest, rows = load_run(outcome.run_dir)
        print(format_summary(manifest, rows))
        print(f"  run saved to {outcome.run_dir}")
        errored = rows.filter(pl.col("case_status") == "error").select("case_id", "repeat").n_unique()
        if errored:
            print(
                f"  to run the {errored} errored case{'s' if errored > 1 else ''} again: evalkit run --resume {outcome.run_dir}"
            )
        baseline = suite.base_dir / "baseline.json"
        if args.report:
            from evalkit._fs import atomic_write_text
            from evalkit.baseline import load_reference
            from evalkit.report import build_report, render_html

            reference = load_reference(baseline) if baseline.exists() else None
            html_path = outcome.run_dir / "report.html"
            atomic_write_text(html_path, render_html(build_report(manifest, rows, reference)))
            print(f"  report: {html_path}")
        if args.gate:
            if not baseline.exists():
                print(f"  gate: no {baseline}; accept one with `evalkit baseline accept {outcome.run_dir}`")
                status = max(status, EXIT_FAIL)
            else:
                from evalkit.gate import run_gate

                try:
                    gate = run_gate(outcome.run_dir, baseline, max_drop=args.max_drop)
                except EvalkitError as exc:  # this suite's gate cannot judge; the other suites still run
                    print(f"  gate: {exc}")
                    status = max(status, EXIT_USAGE)
                else:
                    print("  " + gate.text.replace("\n", "\n  "))
                    status = max(status, gate.exit_code)
        print()
    return status


def _same_system(given: str, recorded: str, suite_dir: Path | None = None) -> bool:
    """Whether a --system spec names the recorded one: a file may be given by another path to it, from the
    current directory or (as a suite's default_system is) from the suite's folder."""
    if given == recorded:
        return True
    if ".py:" in given and ".py:" in recorded:
        (file_a, func_a), (file_b, func_b) = (spec.rsplit(":", 1) for spec in (given, recorded))
        bases = [Path.cwd()] + ([suite_dir] if suite_dir is not None else [])
        return func_a == func_b and any((base / file_a).resolve() == Path(file_b).resolve() for base in bases)
    return False


def _resume_conflicts(args: argparse.Namespace, manifest: Any) -> list[str]:
    """Options given with --resume that ask for something other than the run was."""
    conflicts = []
    if args.suites and [p.resolve() for p in _expand(args.suites)] != [Path(manifest.suite_path).resolve()]:
        conflicts.append(f"the run is of the suite at {manifest.suite_path}")
    name = manifest.system.get("name")
    suite_path = Path(manifest.suite_path)
    suite_dir = suite_path if suite_path.suffix != ".jsonl" else suite_path.parent
    if args.system is not None and not _same_system(args.system, str(name), suite_dir):
        conflicts.append(f"the run's system is {name}, not {args.system}")
    if args.repeats is not None and args.repeats != manifest.repeats:
        conflicts.append(f"the run has {manifest.repeats} repeat(s), not {args.repeats}")
    if args.judge is not None and args.judge != "auto" and (args.judge == "on") != bool(manifest.judge):
        conflicts.append(
            f"the run was {'judged' if manifest.judge else 'not judged'}; --judge {args.judge} would mix"
        )
    if args.out is not None and Path(args.out).resolve() != Path(args.resume).resolve():
        conflicts.append("a resumed run stays in its own directory (drop --out)")
    return conflicts


def _dry_run(suite: Any, system: Any, args: argparse.Namespace) -> str:
    import os

    from evalkit.runner import estimate_run

    count = None
    if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL"):
        from evalkit.client import Client

        count = Client(max_retries=args.max_retries).count_tokens
    judge = None if args.judge == "off" else suite.config.judge
    return estimate_run(
        suite, system, repeats=args.repeats, judge=judge, count_tokens=count, batch=args.batch
    ).format()


def cmd_cache(args: argparse.Namespace) -> int:
    from evalkit.cache import prune, scan

    directory = Path(args.cache_dir) if args.cache_dir else None

    def plural(n: int, word: str, many: str | None = None) -> str:
        return f"{n} {word if n == 1 else many or word + 's'}"

    def listing(lines: Sequence[str], err: bool = False, limit: int = 20) -> None:
        # bounded: a cache can hold thousands of entries
        for line in lines[:limit]:
            print(f"  {line}", file=sys.stderr if err else sys.stdout)
        if len(lines) > limit:
            print(f"  ... and {len(lines) - limit} more", file=sys.stderr if err else sys.stdout)

    if args.action == "stats":
        summary = scan(directory)
        missing = "" if summary.directory.exists() else " (no such directory)"
        print(f"cache {summary.directory}{missing}: {summary.entries} entries, {summary.bytes / 1e6:.2f} MB")
        for model, n in sorted(summary.by_model.items()):
            print(f"  {model}: {n}")
        if summary.oldest and summary.newest:
            print(f"  oldest {summary.oldest:%Y-%m-%d %H:%M}, newest {summary.newest:%Y-%m-%d %H:%M}")
        if summary.temp_files:
            print(
                f"  {plural(summary.temp_files, 'temp file')} (writes in progress, or left by interrupted ones)"
            )
        if summary.corrupt:
            print(
                f"  {plural(len(summary.corrupt), 'corrupt entry', 'corrupt entries')}: a readwrite or refresh run "
                "warns and fetches the response again, replacing the file; a replay run stops with an error naming "
                "the file. Restore them from git or delete them; `evalkit cache prune --older-than DAYS` also "
                "removes them once their file is older than DAYS."
            )
            listing([f"corrupt: {path}: {why}" for path, why in summary.corrupt.items()])
        if summary.unreadable:
            print(
                f"  {plural(len(summary.unreadable), 'folder or file', 'folders or files')} could not be read "
                "(what they hold is not counted above); check their permissions:"
            )
            listing([f"unreadable: {path}: {why}" for path, why in summary.unreadable.items()])
        return EXIT_OK
    if args.older_than is None:
        print("evalkit cache prune: give --older-than DAYS", file=sys.stderr)
        return EXIT_USAGE
    report = prune(directory, older_than_days=args.older_than, dry_run=args.dry_run)
    verb = "would remove" if report.dry_run else "removed"
    print(
        f"{verb} {plural(len(report.removed), 'entry', 'entries')} ({report.bytes_freed / 1e6:.2f} MB) and "
        f"{plural(len(report.temp_files), 'stale temp file')}; kept {report.kept}"
    )
    if report.dry_run:
        listing([str(path) for path in (*report.removed, *report.temp_files)])
    if report.failed:
        print(f"could not remove {plural(len(report.failed), 'file')}:", file=sys.stderr)
        listing([f"{path}: {why}" for path, why in report.failed.items()], err=True)
    if report.unreadable:
        print(
            f"could not read {plural(len(report.unreadable), 'folder or file', 'folders or files')}, so what "
            "they hold was not considered:",
            file=sys.stderr,
        )
        listing([f"{path}: {why}" for path, why in report.unreadable.items()], err=True)
    return EXIT_OK if report.complete else EXIT_USAGE


def cmd_report(args: argparse.Namespace) -> int:
    from evalkit._fs import atomic_write_text
    from evalkit.baseline import load_reference
    from evalkit.report import build_report, format_report, render_html
    from evalkit.results import load_run

    manifest, rows = load_run(args.run)
    reference = load_reference(args.baseline) if args.baseline else None
    report = build_report(manifest, rows, reference)
    print(format_report(report))
    if args.html:
        atomic_write_text(Path(args.html), render_html(report, max_flipped=args.max_flipped))
        print(f"  HTML report written to {args.html}")
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    from evalkit.gate import run_gate

    outcome = run_gate(
        args.run,
        args.baseline,
        max_drop=args.max_drop,
        require_significant=args.require_significant,
        junit=args.junit,
    )
    print(outcome.text)
    return EXIT_FAIL if outcome.decision.failed else EXIT_OK


def cmd_baseline_accept(args: argparse.Namespace) -> int:
    from evalkit.baseline import accept

    done = accept(args.run, to=args.to, force=args.force)
    b = done.baseline
    if done.unchanged:
        print(f"{done.path} already holds the baseline of run {b.run_id}; nothing written")
        return EXIT_OK
    score = "n/a" if b.score.rate is None else f"{100 * b.score.rate:.1f}%"
    print(
        f"baseline written to {done.path}: suite {b.suite} version {b.suite_version}, run {b.run_id}, "
        f"pass rate {score} ({b.score.passes}/{b.score.scored} scored), {len(b.cases)} cases"
    )
    if done.replaced is not None:
        old = "n/a" if done.replaced.score.rate is None else f"{100 * done.replaced.score.rate:.1f}%"
        print(f"  replaced the baseline of run {done.replaced.run_id} (pass rate {old}); commit the change")
    unscored = sum(1 for v in b.cases.values() if v == "not_scored")
    if unscored:
        print(
            f"  warning: {unscored} cases are not scored in this baseline (judge not run?); "
            "gates skip them until a baseline scores them",
            file=sys.stderr,
        )
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

    p = sub.add_parser(
        "run",
        help="run suites against a system and print a summary",
        description="Run every case of a suite (x repeats) through a system, grade it cheapest-first, and journal "
        "the results to runs/<run-id>/ (manifest.json, results.jsonl, results.parquet). An interrupted run "
        "resumes with --resume without redoing finished cases. Claude calls go through the response cache, "
        "so a rerun is free.",
    )
    p.add_argument(
        "suites", nargs="*", metavar="SUITE", help="suite folder, .jsonl file, or a folder of suites"
    )
    p.add_argument(
        "--system",
        default=None,
        help="baseline (the suite's baseline.py), claude (the suite's prompt.md), or module:function / file.py:function "
        "(default: the suite's default_system)",
    )
    p.add_argument(
        "--repeats",
        type=_positive,
        default=None,
        help="runs per case, for the noise floor (default 1; with --resume, the run's own)",
    )
    p.add_argument(
        "--concurrency",
        type=_positive,
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
    p.add_argument(
        "--cache-dir", default=None, help="cache folder (default $EVALKIT_CACHE_DIR or .evalkit/cache)"
    )
    p.add_argument(
        "--judge",
        choices=["auto", "on", "off"],
        default=None,
        help="run judge checks: auto (when ANTHROPIC_API_KEY is set, or --cache replay reads recorded verdicts), on, off",
    )
    p.add_argument(
        "--batch",
        action="store_true",
        help="send uncached requests through the Message Batches API (with --resume: if the run was a batch run, "
        "its batches are collected, not submitted again)",
    )
    p.add_argument("--max-retries", type=_non_negative, default=4, help="retries per API call (default 4)")
    p.add_argument(
        "--processes",
        type=_positive,
        default=None,
        help="worker processes for model calls (default: one per 16 calls in flight, up to the cores)",
    )
    p.add_argument("--out", default=None, help="run directory (default runs/<run-id>)")
    p.add_argument("--runs-dir", default="runs", help="where new run directories go (default runs/)")
    p.add_argument("--resume", default=None, metavar="RUN_DIR", help="finish an interrupted run")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--report", action="store_true", help="also write report.html into the run directory")
    p.add_argument(
        "--gate",
        action="store_true",
        help="also gate each run against its suite's baseline.json (exit 1 when any suite regressed)",
    )
    p.add_argument("--max-drop", type=float, default=0.02, help="the gate's tolerated drop (default 0.02)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="send nothing but count_tokens: estimate tokens and dollars per grader kind (offline: by characters)",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "report",
        help="summarise a run, compare it with a baseline, write an HTML report",
        description="Print a run's summary and, with --baseline, the paired change against it: the difference "
        "with its 95%% interval and McNemar's exact p, the flipped cases, and the slices that moved. When both "
        "sides share a suite version and prompt but resolved to different model versions, that comes first. "
        "--html writes one self-contained file (inline SVG charts, no scripts, opens offline).",
    )
    p.add_argument("run", metavar="RUN", help="run directory (runs/<run-id>/)")
    p.add_argument(
        "--baseline",
        default=None,
        metavar="RUN_OR_BASELINE_JSON",
        help="compare with this run directory or baseline.json",
    )
    p.add_argument("--html", default=None, metavar="FILE", help="write the HTML report here")
    p.add_argument(
        "--max-flipped",
        type=_positive,
        default=200,
        metavar="N",
        help="flipped cases listed in the HTML report, regressions first (default 200; the count is always shown)",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "gate",
        help="exit 1 when a run's pass rate dropped below its baseline",
        description="Compare a finished run with its baseline on the case ids both share and exit 1 when the "
        "pass rate dropped by more than --max-drop (with --require-significant: and McNemar's exact test "
        "calls the drop significant at alpha 0.05). Exit 0 otherwise; 2 on bad input (missing or unreadable "
        "files, an unfinished run, a baseline of another suite). A different suite version is a warning: only "
        "shared case ids are compared.",
    )
    p.add_argument("run", metavar="RUN", help="run directory (runs/<run-id>/)")
    p.add_argument("--baseline", required=True, metavar="BASELINE", help="baseline.json or a run directory")
    p.add_argument(
        "--max-drop",
        type=_fraction,
        default=0.02,
        metavar="FRACTION",
        help="largest allowed drop in pass rate, as a fraction (default 0.02 = 2 points)",
    )
    p.add_argument(
        "--require-significant",
        action="store_true",
        help="fail only when the drop is also significant (McNemar exact p < 0.05)",
    )
    p.add_argument(
        "--junit",
        default=None,
        metavar="FILE",
        help="write JUnit XML, one test per case (failure message: the failing checks)",
    )
    p.set_defaults(func=cmd_gate)

    baseline = sub.add_parser(
        "baseline",
        help="accept a run as its suite's committed baseline",
        description="Manage baseline.json, the committed record a gate compares against.",
    )
    bsub = baseline.add_subparsers(dest="baseline_action", metavar="ACTION")
    baseline.set_defaults(func=lambda _args: _help(baseline))
    a = bsub.add_parser(
        "accept",
        help="write baseline.json from a finished run",
        description="Write baseline.json (score, suite name and version, one majority verdict per case, "
        "system and judge models with resolved versions, run id and date) atomically, by default into the "
        "run's suite folder. Nothing else ever writes it. An existing baseline from another run is replaced "
        "only with --force, and the old and new scores are printed either way; accepting the same run again "
        "changes nothing. Unfinished runs are refused.",
    )
    a.add_argument("run", metavar="RUN", help="finished run directory (runs/<run-id>/)")
    a.add_argument(
        "--to",
        default=None,
        metavar="PATH",
        help="where to write (default: baseline.json in the suite folder named by the run's manifest)",
    )
    a.add_argument(
        "--force", action="store_true", help="replace an existing baseline that comes from another run"
    )
    a.set_defaults(func=cmd_baseline_accept)

    p = sub.add_parser(
        "cache",
        help="inspect or prune the response cache",
        description="The response cache keeps every Claude response as a readable JSON file, so reruns are free "
        "and a committed cache replays judged evals in CI with no API key.",
    )
    p.add_argument(
        "action", choices=["stats", "prune"], help="stats: entries, size, models; prune: delete old entries"
    )
    p.add_argument(
        "--cache-dir", default=None, help="cache folder (default $EVALKIT_CACHE_DIR or .evalkit/cache)"
    )

    def days(text: str) -> float:
        from evalkit.cache import MAX_PRUNE_DAYS

        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of days: {text!r}") from None
        if not 0 < value <= MAX_PRUNE_DAYS:  # also refuses nan and inf
            raise argparse.ArgumentTypeError(
                f"must be a number of days above 0 and at most {MAX_PRUNE_DAYS} (100 years), not {text}"
            )
        return value

    p.add_argument(
        "--older-than", type=days, default=None, metavar="DAYS", help="prune entries older than DAYS (> 0)"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="list the files prune would remove (the first 20), removing none",
    )
    p.set_defaults(func=cmd_cache)
    return parser


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError("must be a fraction in [0, 1), e.g. 0.02 for 2 points")
    return value


def _int_at_least(least: int, says: str) -> Callable[[str], int]:
    """An argparse type: an int of at least `least`."""

    def parse(text: str) -> int:
        value = int(text)
        if value < least:
            raise argparse.ArgumentTypeError(says)
        return value

    parse.__name__ = "int"  # argparse names the type in its message for text that is not a number
    return parse


_positive = _int_at_least(1, "must be at least 1")
_non_negative = _int_at_least(0, "must be 0 or more")


_terminated: list[int] = []


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    # a CI job that is cancelled gets SIGTERM: stop as on Ctrl-C, so the run is marked interrupted and the
    # log says how to resume it, instead of dying mid-run without a word
    _terminated.append(signum)
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        return _main(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(args: argparse.Namespace) -> int:
    _terminated.clear()
    try:
        return int(args.func(args))
    except SuiteValidationError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"\n{len(exc.problems)} problem(s); nothing was run. Fix them and run again.", file=sys.stderr)
        return EXIT_USAGE
    except EvalkitError as exc:
        print(f"evalkit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader went away (`evalkit ... | head`): not an error of ours, and nothing more to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK
    except Exception as exc:
        client = sys.modules.get("evalkit.client._errors")  # imported only by commands that use the client
        if client is None or not isinstance(exc, client.CallError):
            raise
        print(f"evalkit: error: an API call failed ({exc})", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        print(str(exc) or "interrupted", file=sys.stderr)  # a run's own message says how to resume it
        return 128 + signal.SIGTERM if _terminated else 130


if __name__ == "__main__":
    sys.exit(main())
