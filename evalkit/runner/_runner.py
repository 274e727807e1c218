"""Suite x system x repeats -> a run directory, journalled per case so that no finished work is ever lost.

Work runs in a thread pool (bounded by `concurrency`) rather than an event loop, so the same code runs from a
terminal, from CI and from a notebook whose kernel already owns an event loop.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import gc
import json
import os
import re
import secrets
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from evalkit._hashing import output_hash
from evalkit.cache import MESSAGES_ENDPOINT, ResponseCache, cache_key
from evalkit.errors import EvalkitError, clip
from evalkit.graders import CheckOutcome, GradingContext, JudgeFn, JudgeGrade, grade_case
from evalkit.results import CaseResult, CheckResult, Journal, Manifest, RunDir, case_status, git_commit
from evalkit.runner._workers import WorkerStopped
from evalkit.suite import Case, Suite
from evalkit.systems import ClaudeSystem, PythonSystem, RunnableSystem

JudgeMode = Literal["auto", "on", "off"]


@dataclass
class RunOptions:
    repeats: int = 1
    concurrency: int = 8
    cache_mode: str = "readwrite"
    cache_dir: Path | None = None
    out_root: Path = Path("runs")
    run_dir: Path | None = None
    judge: JudgeMode = "auto"
    progress: bool = True
    batch: bool = False
    batch_poll_s: float = 5.0
    processes: int | None = None  # worker processes for model calls; None = decide from concurrency and cores
    max_retries: int = 4
    timeout: float = 120.0


@dataclass
class RunTotals:
    """Live counters for the progress bar and the summary."""

    done: int = 0
    errors: int = 0
    cache_hits: int = 0
    spent_usd: float = 0.0
    unknown_cost: int = 0
    answered: int = 0
    """Calls this session made that got a reply (cache hits are not calls)."""
    unreachable: int = 0
    """Cases that ended in a connection error."""


@dataclass
class RunOutcome:
    run_dir: Path
    manifest: Manifest
    totals: RunTotals = field(default_factory=RunTotals)
    resumed: int = 0

    @property
    def results(self) -> list[CaseResult]:
        """The run's case results, read from its journal when asked for (a large run never holds them all)."""
        return RunDir(self.run_dir).read_journal(self.manifest.run_id)


def _lock_run_dir(path: Path) -> Any:
    """An open, exclusively locked file in the run directory: two processes never run the same run at once.

    Two resumes of one interrupted run would otherwise both run (and pay for) every case left. The lock goes
    with the process (and its forked workers), so a killed run leaves nothing to clean up."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): runs are not guarded
        return None
    lock = (path / ".lock").open("a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        lock.close()
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            # a file system without locks (NFS mounted nolock, some FUSE mounts): the run goes on unguarded
            warnings.warn(
                f"cannot lock {path} ({exc.strerror}); do not resume this run twice at once", stacklevel=3
            )
            return None
        raise EvalkitError(
            f"{path} is being run by another evalkit process right now; wait for it to finish (or stop it), "
            "then resume it if it did not finish"
        ) from None
    return lock


# describe() fields that say where a system or judge came from, not what it does
_WHERE_FROM = frozenset({"prompt_path", "origin"})


def _changes(recorded: dict[str, Any], now: dict[str, Any], prefix: str = "") -> list[str]:
    """What differs between a manifest's description of a system (or judge) and the one loaded now."""
    if not recorded or not now:
        return []
    return [
        f"the {prefix}{key} has changed since the run started ({recorded.get(key)!r} -> {now.get(key)!r})"
        for key in sorted(set(recorded) | set(now))
        if key not in _WHERE_FROM
        and recorded.get(key) != now.get(key)
        # a function made in a session has no file to hash: its code cannot be compared
        and not (key == "code_hash" and None in (recorded.get(key), now.get(key)))
    ]


@dataclass
class _Raised:
    """What a Python system raised when it ran ahead of the run (a batch's judge phase)."""

    exc: BaseException


class _StopRun(Exception):
    """Every case left would fail the same way: the run stops, saying how to fix it and resume."""

    def advice(self, then: str) -> str:
        """What went wrong and how to fix it, ending with `then`: the command that carries on."""
        raise NotImplementedError


class _AuthFailure(_StopRun):
    """A call was refused for its credentials."""

    def advice(self, then: str) -> str:
        return (
            f"authentication failed ({self}); set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server, or "
            f"--cache replay for a committed cache), then: {then}"
        )


class _BatchFailure(_StopRun):
    """The Message Batches API refused or failed a request the batch run needed."""

    def advice(self, then: str) -> str:
        return (
            f"the Message Batches API failed ({self}); once it answers again: {then} "
            "(any batch already submitted is collected, not paid for again)"
        )


# how long an interrupted run waits for its workers' calls in flight before it stops them
_DRAIN_S = 5.0

# connection failures with no call answered yet, after which a run stops rather than retrying every case
_UNREACHABLE_AFTER = 8


class _Unreachable(_StopRun):
    """The first calls of a run all failed to connect."""

    def advice(self, then: str) -> str:
        where = os.environ.get("ANTHROPIC_BASE_URL") or "the Anthropic API"
        return (
            f"could not connect to {where}: the first {_UNREACHABLE_AFTER} calls failed after their retries "
            f"({self}); check ANTHROPIC_BASE_URL, any proxy and the network, then: {then}"
        )


class _RunnerClient:
    """The runner's current client, looked up on each use (worker processes live only as long as a run)."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runner.client, name)


def new_run_id(suite: str) -> str:
    """`<UTC time>-<suite name as a safe folder name>-<4 hex digits>`: "team/triage v2" gives ...-team-triage-v2-..."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^\w.]+", "-", suite).strip("-.") or "suite"
    return f"{stamp}-{slug}-{secrets.token_hex(2)}"


def has_api_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


class Runner:
    """Runs one suite against one system; construct, then call :meth:`run`."""

    def __init__(
        self,
        suite: Suite,
        system: RunnableSystem,
        options: RunOptions | None = None,
        *,
        client: Any = None,
        judge: JudgeFn | None = None,
        judge_config: dict[str, Any] | None = None,
    ) -> None:
        self.suite = suite
        self.system = system
        self.options = options or RunOptions()
        self._client = client
        self._client_given = client is not None
        self._judge_given = judge is not None
        self.cache = ResponseCache(self.options.cache_dir, mode=self.options.cache_mode)  # type: ignore[arg-type]
        if judge is None and self._judge_wanted():
            from evalkit.graders import Judge

            judge = Judge(client=_RunnerClient(self), settings=suite.config.judge, cache=self.cache)
        self.judge = judge
        from evalkit.graders import Judge

        # evalkit's own judge keys each verdict by the repeat, as the system's calls are keyed: repeats measure
        # the judge's noise too, and a replay gives each (case, repeat) the verdict it was given
        self._repeat_judge = judge if isinstance(judge, Judge) else None
        judge_model = getattr(getattr(judge, "settings", None), "model", None)
        if judge_model is not None and judge_model == system.model:
            warnings.warn(
                f"the judge ({judge_model}) is the model it grades; a different judge model avoids self-preference",
                stacklevel=2,
            )
        describe = getattr(judge, "describe", None)
        self.judge_config = judge_config or (describe() if callable(describe) else None)
        self.ctx = GradingContext(base_dir=suite.base_dir, output_schema=suite.output_schema, user=suite.user)
        self.totals = RunTotals()
        self.batch_phases: list[Any] = []
        self._lock: Any = None  # the open lock file of the run directory, while a run is in progress
        # a Python system's outputs from a batch's judge phase, used (once) by run_one: (case id, repeat) -> (output,
        # latency)
        self._prefilled: dict[tuple[str, int], tuple[Any, float]] = {}

    def _judge_wanted(self) -> bool:
        if self.options.judge == "off" or not any(
            c.kind == "judge" for case in self.suite.cases for c in case.checks
        ):
            return False
        # a replay reads recorded verdicts and never calls the API, so it needs no key (as in CI)
        return self.options.judge == "on" or has_api_key() or self.cache.mode.value == "replay"

    # -- the client is created only when something needs Claude ------------------------------------------------

    @property
    def client(self) -> Any:
        if self._client is None:
            from evalkit.client import Client

            self._client = Client(
                max_concurrency=self.options.concurrency,
                max_retries=self.options.max_retries,
                timeout=self.options.timeout,
            )
        return self._client

    def processes(self) -> int:
        """Worker processes for this run: the option, or one per 16 cases in flight up to the cores."""
        import multiprocessing

        if self._client_given or self._judge_given or "fork" not in multiprocessing.get_all_start_methods():
            return 1  # a caller's own client cannot be shared across a fork; workers start by fork only
        if self.options.processes is not None:
            return max(1, self.options.processes)
        # below a few dozen cases in flight one process keeps up; past that its CPU sets the pace. One more
        # process than cores keeps every core busy while the others wait on the network.
        return max(1, min((os.cpu_count() or 1) + 1, self.options.concurrency // 16))

    def in_worker(self) -> None:
        """Called in a forked worker: build a client of its own (sockets must not be shared across a fork)."""
        self._client = None
        self.options.processes = 1

    # -- one (case, repeat) -----------------------------------------------------------------------------------

    def _call_claude(
        self, system: ClaudeSystem, case: Case, repeat: int, writes: list[Callable[[], None]] | None = None
    ) -> tuple[Any, Any, bool]:
        request = system.build_request(case.input)
        key = cache_key(MESSAGES_ENDPOINT, request, repeat)
        entry = self.cache.get(key, label=f"case {case.id} repeat {repeat}")
        from evalkit.client import CallResult

        if entry is not None:
            result = CallResult.from_cache_entry(
                entry, requested_model=system.model, structured=system.output_schema is not None
            )
            return system.parse_output(result.text, result.json), result, not self.cache.paid_for(entry)
        result = self.client.create(request)
        meta = result.cache_meta(case_id=case.id)

        def write() -> None:
            self.cache.put(key, MESSAGES_ENDPOINT, request, repeat, result.message, meta=meta, verify=False)

        if writes is None:
            write()
        else:
            writes.append(write)
        return system.parse_output(result.text, result.json), result, False

    def prefill_output(self, case: Case, repeat: int) -> tuple[bool, Any]:
        """(found, output) for a batch's judge phase, before the run grades: never a call to the API.

        A Claude system's output comes from the cache only (not found when its batch did not answer it: the
        run then calls it and judges it live). A Python system runs once here, and ``run_one`` uses what it
        gave, so a pipeline with costs or side effects is not run twice. Raises what the system raised."""
        if isinstance(self.system, PythonSystem):
            started = time.perf_counter()
            try:
                output = self.system.fn(case.input)
            # run_one records what it raised as the case's error, without running it again
            except (Exception, SystemExit) as exc:
                self._prefilled[(case.id, repeat)] = (_Raised(exc), time.perf_counter() - started)
                raise
            self._prefilled[(case.id, repeat)] = (output, time.perf_counter() - started)
            try:
                return True, _as_recorded(output)  # graded as run_one will grade it
            except (TypeError, ValueError):
                return False, None  # not JSON: run_one makes it an error result
        request = self.system.build_request(case.input)
        entry = self.cache.get(cache_key(MESSAGES_ENDPOINT, request, repeat))
        if entry is None:
            return False, None
        from evalkit.client import CallResult

        result = CallResult.from_cache_entry(
            entry, requested_model=self.system.model, structured=self.system.output_schema is not None
        )
        return True, self.system.parse_output(result.text, result.json)

    def judge_for(self, repeat: int) -> JudgeFn | None:
        """The judge function for one repeat's outputs."""
        if self._repeat_judge is not None:
            return functools.partial(self._repeat_judge, repeat=repeat)
        return self.judge

    def run_one(
        self, case: Case, repeat: int, run_id: str, writes: list[Callable[[], None]] | None = None
    ) -> CaseResult:
        """One (case, repeat): the system's output, graded.

        With `writes`, the new response's cache entry is not written but appended there as a callable, for a
        caller that writes it off this thread (and must do so before it journals the result)."""
        base: dict[str, Any] = {
            "run_id": run_id,
            "suite": self.suite.name,
            "suite_version": self.suite.version,
            "case_id": case.id,
            "slice": case.slice,
            "split": case.split,
            "repeat": repeat,
            "system": self.system.name,
            "system_model": self.system.model,
        }
        t0 = time.perf_counter()
        hashed: str | None = None
        pending = writes if writes is not None else []
        try:
            if isinstance(self.system, PythonSystem):
                prefilled = self._prefilled.pop((case.id, repeat), None)
                if prefilled is not None:
                    output, base["latency_s"] = prefilled
                    if isinstance(output, _Raised):
                        raise output.exc
                else:
                    output = self.system.fn(case.input)
                    base["latency_s"] = time.perf_counter() - t0
                if self.system.free:
                    base["cost_usd"] = 0.0
                hashed = _json_output_hash(output, self.system.name)
                output = _as_recorded(output)
            else:
                output, call, hit = self._call_claude(self.system, case, repeat, pending)
                base.update(
                    system_model_version=call.model,
                    request_id=call.request_id,
                    input_tokens=call.input_tokens,
                    output_tokens=call.output_tokens,
                    cache_read_tokens=call.cache_read_input_tokens,
                    cache_write_tokens=call.cache_creation_input_tokens,
                    cost_usd=call.cost_usd,
                    latency_s=call.latency_s,
                    cache_hit=hit,
                )
        # no output (a system's sys.exit too): an error, never a pass or a fail
        except (Exception, SystemExit) as exc:
            return CaseResult(status="error", **_errored(case, exc), **base)
        outcomes = grade_case(
            case,
            output,
            self.ctx,
            judge=self.judge_for(repeat),
            skip_judge_when=self.suite.config.skip_judge_when,
        )
        checks = [_check_result(o) for o in outcomes]
        result = CaseResult(
            status=case_status(checks),
            output=output,
            output_hash=hashed if hashed is not None else _safe_hash(output),
            checks=checks,
            **base,
        )
        if writes is None:  # written here, after the result is made: one that fails keeps the call's cost
            try:
                for write in pending:
                    write()
            except Exception as exc:  # e.g. the disk filled up: an error, run again on resume
                return as_error(result, case, exc)
        return result

    # -- the whole run ----------------------------------------------------------------------------------------

    def _prepare(self, resume: Path | None) -> tuple[RunDir, Manifest, set[tuple[str, int]], Manifest | None]:
        """The run directory, its manifest, the (case, repeat) pairs already done, and the manifest as a resumed
        run left it (None for a new run)."""
        if resume is not None:
            run = RunDir(resume)
            manifest = run.read_manifest()
            run.repair_journal()
            if manifest.suite_version != self.suite.version:
                raise EvalkitError(
                    f"{resume}: the run is of suite version {manifest.suite_version}, but {self.suite.name} is now "
                    f"{self.suite.version}; start a new run instead of resuming"
                )
            changed = _changes(manifest.system, self.system.describe()) + _changes(
                manifest.judge or {}, self.judge_config or {}, "judge "
            )
            if bool(manifest.judge) != bool(self.judge_config):
                changed.append(
                    "the run was judged, but no judge is available now (set ANTHROPIC_API_KEY, or --judge on)"
                    if manifest.judge
                    else "the run was not judged, but now a judge would be asked (pass --judge off)"
                )
            if changed:
                raise EvalkitError(
                    f"{resume}: {'; '.join(changed)}. Resuming would mix two setups in one run: start a new run "
                    "instead (or undo the change)"
                )
            done = {r.key for r in run.read_journal(manifest.run_id) if r.status != "error"}
            before = manifest.model_copy()
            manifest.status = "running"
            manifest.ended_at = None
            return run, manifest, done, before
        run_id = new_run_id(self.suite.name)
        path = self.options.run_dir or (self.options.out_root / run_id)
        if path.exists() and not path.is_dir():
            raise EvalkitError(f"{path} is a file, not a directory; choose another --out")
        if path.exists() and any(path.iterdir()):
            raise EvalkitError(f"{path} already holds files; choose an empty --out or use --resume {path}")
        manifest = Manifest(
            run_id=run_id,
            suite=self.suite.name,
            suite_version=self.suite.version,
            suite_path=str((self.suite.root or self.suite.cases_file).resolve()),
            cases=len(self.suite.cases),
            repeats=self.options.repeats,
            system=self.system.describe(),
            judge=self.judge_config,
            cache={"mode": self.cache.mode.value, "directory": str(self.cache.directory.resolve())},
            concurrency=self.options.concurrency,
            batch=self.options.batch,
            git_commit=git_commit(),
        )
        return RunDir(path), manifest, set(), None

    def run(
        self, resume: Path | None = None, on_result: Callable[[CaseResult], None] | None = None
    ) -> RunOutcome:
        """Run every (case, repeat) not yet done (all of them, or those `resume`'s journal lacks)."""
        try:
            return self._run(resume, on_result)
        finally:
            if self._lock is not None:
                self._lock.close()  # released: another process may resume this run now
                self._lock = None

    def _run(self, resume: Path | None, on_result: Callable[[CaseResult], None] | None) -> RunOutcome:
        if isinstance(self.system, ClaudeSystem) or self.judge is not None:
            self.cache.check_writable()  # fail before the run directory exists, not halfway through
            self.cache.check_readable()  # a replay with no cache to read would only give replay misses
            if getattr(self._client, "prices", None) is None:
                from evalkit.client import current_prices

                current_prices()  # a bad EVALKIT_PRICES file fails here, not once in every case
        if self.options.batch and self.cache.mode.value != "readwrite":
            raise EvalkitError("--batch fills the response cache, so it needs --cache readwrite")
        run, manifest, done, before = self._prepare(resume)
        was_complete = before is not None and before.status == "complete"
        repeats = manifest.repeats
        todo = [(c, r) for r in range(repeats) for c in self.suite.cases if (c.id, r) not in done]
        try:  # a folder that cannot be made fails here, before any call
            run.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EvalkitError(
                f"{run.path}: cannot make the run directory ({exc.strerror}); choose another --out or --runs-dir"
            ) from None
        self._lock = _lock_run_dir(run.path)
        journal: Journal | None = None
        bar = None
        interrupted = False
        stopped: _StopRun | None = None
        failure: Exception | None = None
        workers: Any = None
        # the collector leaves alone what existed before the run (the suite, the SDK's modules): otherwise the
        # first burst of cases set off a full collection of all of it, about 90 ms; forked workers inherit this,
        # so theirs do not copy every inherited page either
        gc.freeze()
        try:
            if (
                self.options.batch
                and todo
                and (isinstance(self.system, ClaudeSystem) or self.judge is not None)
            ):
                from evalkit.client import CallError
                from evalkit.runner._batch import prefill

                run.write_manifest(manifest)  # the batch ids go into it as batches are made
                try:
                    self.batch_phases = prefill(self, todo, manifest, run)
                except CallError as exc:
                    raise (
                        _AuthFailure(str(exc)) if exc.kind == "auth" else _BatchFailure(str(exc))
                    ) from None
            if self.processes() > 1 and len(todo) > self.options.concurrency:
                from evalkit.runner._workers import CaseWorkers

                if isinstance(self.system, ClaudeSystem) or self.judge is not None:
                    from evalkit.client import warm_up

                    warm_up()  # once here, not once in every worker as its first wave of cases waits
                # fork before this process starts threads of its own (the progress bar's, the pool's)
                workers = CaseWorkers(self, self.processes(), self.options.concurrency, manifest.run_id, todo)
            # written while the workers' first calls are out: no result comes back before both are ready
            run.write_manifest(manifest)
            journal = Journal(run.journal_path)
            bar = _progress(
                total=len(self.suite.cases) * repeats,
                initial=len(done),
                desc=self.suite.name,
                enabled=self.options.progress,
            )
            if workers is not None:
                self._execute_in_workers(workers, journal, bar, on_result)
            else:
                self._execute(todo, manifest.run_id, journal, bar, on_result)
        except KeyboardInterrupt:
            interrupted = True
        except _StopRun as exc:
            interrupted = True
            stopped = exc
        except Exception as exc:  # a worker that died, a disk that filled up, or a bug: marked, then raised
            interrupted = True
            failure = exc
        finally:
            gc.unfreeze()
            if workers is not None:
                workers.close(finished=False)  # a no-op once they have been stopped in order
            if journal is not None:
                journal.close()
            if bar is not None:
                bar.close()
        if interrupted:
            # a resumed run that was complete still has a result for every case: it stays complete
            manifest.status = "complete" if was_complete else "interrupted"
            if before is not None and was_complete:
                manifest.ended_at = before.ended_at
            with contextlib.suppress(
                OSError
            ):  # a full disk may refuse this too: the journal has what finished
                run.write_manifest(manifest)
            if stopped is not None:
                nothing_done = self.totals.done == self.totals.errors and not manifest.batch_ids
                if (
                    isinstance(stopped, _AuthFailure)
                    and resume is None
                    and nothing_done
                    and self._discard(run)
                ):
                    # bad credentials are bad input: every call so far was refused, and nothing is left behind
                    raise EvalkitError(stopped.advice("run the same command again"))
                raise EvalkitError(stopped.advice(f"evalkit run --resume {run.path}"))
            if isinstance(failure, OSError | WorkerStopped):
                raise EvalkitError(
                    f"the run stopped: {failure}. What finished is kept; once the cause is fixed: "
                    f"evalkit run --resume {run.path}"
                ) from failure
            if failure is not None:
                raise failure
            raise KeyboardInterrupt(f"interrupted; finish with: evalkit run --resume {run.path}")
        assert journal is not None  # made before anything that could return without raising
        run.finish(journal, run_id=manifest.run_id)
        if workers is not None:
            workers.join()  # they exit while the run directory is finished
        manifest.status = "complete"
        manifest.ended_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        run.write_manifest(manifest)
        return RunOutcome(run.path, manifest, self.totals, resumed=len(done))

    def _discard(self, run: RunDir) -> bool:
        """Remove a new run's directory that holds no result; whether it is gone."""
        for path in (run.manifest_path, run.journal_path, run.path / ".lock"):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        try:
            run.path.rmdir()
        except OSError:  # something else was put there: leave it
            return False
        return True

    def _execute(
        self,
        todo: list[tuple[Case, int]],
        run_id: str,
        journal: Journal,
        bar: Any,
        on_result: Callable[[CaseResult], None] | None,
    ) -> None:
        workers = max(1, self.options.concurrency)
        pending: set[Future[CaseResult]] = set()
        items = iter(todo)
        # submit lazily (at most 2 x workers queued) so a 10,000-case run never holds 10,000 futures
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evalkit") as pool:
            try:
                for case, repeat in items:
                    pending.add(pool.submit(self.run_one, case, repeat, run_id))
                    if len(pending) >= 2 * workers:
                        finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                        self._record(finished, journal, bar, on_result)
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    self._record(finished, journal, bar, on_result)
            except BaseException:
                for f in pending:
                    f.cancel()
                pool.shutdown(wait=True, cancel_futures=True)
                # the calls that were in flight have finished (and been paid for): journal them, so a resume
                # neither counts them as cache hits nor loses what they cost
                for f in pending:
                    if f.done() and not f.cancelled() and f.exception() is None:
                        with contextlib.suppress(_StopRun):
                            self._record_one(f.result(), journal, bar, on_result)
                raise

    def _execute_in_workers(
        self,
        workers: Any,
        journal: Journal,
        bar: Any,
        on_result: Callable[[CaseResult], None] | None,
    ) -> None:
        finished = False
        try:
            for result in workers.results():
                self._record_one(result, journal, bar, on_result)
            finished = True
        except KeyboardInterrupt:
            # the calls in flight finish and are journalled (they are paid for); a second Ctrl-C stops at once
            with contextlib.suppress(KeyboardInterrupt, _StopRun):
                for result in workers.drain(_DRAIN_S):
                    self._record_one(result, journal, bar, on_result)
            raise
        finally:
            workers.close(finished)

    def _record(
        self,
        finished: set[Future[CaseResult]],
        journal: Journal,
        bar: Any,
        on_result: Callable[[CaseResult], None] | None,
    ) -> None:
        for fut in finished:
            self._record_one(fut.result(), journal, bar, on_result)

    def _record_one(
        self,
        result: CaseResult,
        journal: Journal,
        bar: Any,
        on_result: Callable[[CaseResult], None] | None,
    ) -> None:
        journal.append(result)
        t = self.totals
        if result.status == "error":
            # every other case would fail the same way: stop now, with the fix, not after N error results
            error = result.error or ""
            if error.startswith("CallError: auth"):
                raise _AuthFailure(error)
            if error.startswith("CallError: connection"):
                t.unreachable += 1
                if not t.answered and t.unreachable >= _UNREACHABLE_AFTER:
                    raise _Unreachable(error)
        elif result.input_tokens is not None and not result.cache_hit:
            t.answered += 1
        t.done += 1
        t.errors += result.status == "error"
        t.cache_hits += result.cache_hit
        for cost, hit, replied in [(result.cost_usd, result.cache_hit, result.input_tokens is not None)] + [
            (c.judge_cost_usd, bool(c.judge_cache_hit), c.judge_input_tokens is not None)
            for c in result.checks
            if c.judge_model
        ]:
            if hit or not replied:  # a call that ended in an error was not answered, so not charged
                continue
            if cost is None:
                t.unknown_cost += 1
            else:
                t.spent_usd += cost
        if on_result is not None:
            on_result(result)
        if bar is not None:
            bar.set_postfix_str(f"hits={t.cache_hits} errors={t.errors} ${t.spent_usd:.4f}", refresh=False)
            bar.update(1)


def _errored(case: Case, exc: BaseException) -> dict[str, Any]:
    """The error and per-check error verdicts of a case whose output could not be had (or kept)."""
    message = f"{type(exc).__name__}: {exc}"
    checks = [
        CheckResult(
            index=i, kind=c.kind, name=c.label, field=c.field, tier=c.tier, status="error", error=message
        )
        for i, c in enumerate(case.checks)
    ]
    return {"error": message, "checks": checks}


def as_error(result: CaseResult, case: Case, exc: BaseException) -> CaseResult:
    """`result` turned into an error result (its call's cost and ids kept): its cache entry could not be written."""
    return result.model_copy(
        update={"status": "error", "output": None, "output_hash": None, **_errored(case, exc)}
    )


def _as_recorded(output: Any) -> Any:
    """A Python system's output as the journal records it, so it is graded as recorded: a tuple is a list, a
    dict's int keys are strings. Raises TypeError/ValueError for what is not JSON."""
    if isinstance(output, dict | list | tuple):
        return json.loads(json.dumps(output, ensure_ascii=False, allow_nan=False))
    return output


def _json_output_hash(output: Any, system: str) -> str:
    """The output's hash; a TypeError saying what to return if the output is not a JSON value."""
    try:
        return output_hash(output)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{system} returned {type(output).__name__} {clip(repr(output), 80)}, which is not a JSON value "
            f"({exc}); return a str, number, bool or None, or lists and dicts of them"
        ) from None


def _safe_hash(output: Any) -> str | None:
    try:
        return output_hash(output)
    except (TypeError, ValueError):
        return None


def _check_result(o: CheckOutcome) -> CheckResult:
    chk = o.check
    data: dict[str, Any] = {
        "index": o.index,
        "kind": chk.kind,
        "name": chk.label,
        "field": chk.field,
        "tier": chk.tier,
        "status": o.status,
        "passed": o.passed,
        "skipped_reason": o.skipped_reason,
        "error": o.error,
    }
    g = o.grade
    if g is not None:
        data.update(score=g.score, detail=g.detail)
        if isinstance(g, JudgeGrade):
            data.update(
                judge_model=g.model,
                judge_model_version=g.model_version,
                judge_reasoning=g.reasoning,
                judge_criteria=g.criteria,
                judge_input_tokens=g.input_tokens,
                judge_output_tokens=g.output_tokens,
                judge_cost_usd=g.cost_usd,
                judge_latency_s=g.latency_s,
                judge_cache_hit=g.cache_hit,
            )
    return CheckResult(**data)


def _progress(total: int, initial: int, desc: str, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    # in a terminal or a notebook the bar moves; in a CI log every redraw is kept, so redraw every 30 s there
    live = sys.stderr.isatty() or "ipykernel" in sys.modules
    return tqdm(
        total=total,
        initial=initial,
        desc=desc,
        unit="case",
        dynamic_ncols=True,
        mininterval=0.2 if live else 30.0,
    )
