"""Suite x system x repeats -> a run directory, journalled per case so that no finished work is ever lost.

The runner only orchestrates: it starts (or resumes) the run directory, fills the cache through batches when
asked, runs the cases in threads or worker processes, and then finishes the run or marks it interrupted.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from evalkit._failpoints import reached
from evalkit._results import CaseResult, Journal, Manifest, RunDir
from evalkit._runner._batch import prefill
from evalkit._runner._context import RunContext
from evalkit._runner._options import RunOptions
from evalkit._runner._record import Recorder, RunTotals, progress_bar
from evalkit._runner._start import (
    Start,
    discard,
    lock_run_dir,
    make_run_dir,
    mark_manifest,
    spent_before,
    start_run,
)
from evalkit._runner._stops import _AuthFailure, _BatchFailure, _SpendingCapReached, _SpendLimit, _StopRun
from evalkit._runner._threads import run_in_threads
from evalkit._runner._workers import CaseWorkers, _WorkerStopped, record_from_workers
from evalkit._systems import ClaudeSystem, RunnableSystem
from evalkit.errors import CallError, EvalkitError, SpendingStopped
from evalkit.graders import JudgeFn
from evalkit.suite import Case, Suite

Ending = Literal["complete", "interrupted", "stopped", "failed"]

# requests looked up in the cache to tell a warm rerun, which needs neither the SDK nor worker processes
_SAMPLE = 12
# threads that call what a warm rerun's cache cannot answer (the cached cases run in the calling thread)
_WARM_THREADS = 4


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


@dataclass
class _Work:
    """What running the cases left: how it ended (and why), and the journal the run is finished from."""

    ending: Ending = "complete"
    error: BaseException | None = None
    journal: Journal | None = None
    workers: CaseWorkers | None = None


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
        self.context = RunContext.create(
            suite, system, options or RunOptions(), client=client, judge=judge, judge_config=judge_config
        )
        self.totals = RunTotals()
        self.batch_phases: list[Any] = []
        self._lock: IO[str] | None = None  # the locked file of the run directory, while a run is in progress
        self._todo = 0  # the (case, repeat) pairs this session set out to run
        self._warm = False  # whether the cache looked like it answers every request (see _will_call)

    suite = property(lambda self: self.context.suite)
    system = property(lambda self: self.context.system)
    options = property(lambda self: self.context.options)
    cache = property(lambda self: self.context.cache)
    judge = property(lambda self: self.context.judge)
    judge_config = property(lambda self: self.context.judge_config)
    client = property(lambda self: self.context.client)

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
        self._check_ready()
        start = start_run(self.context, resume)
        todo = [
            (c, r)
            for r in range(start.manifest.repeats)
            for c in self.suite.cases
            if (c.id, r) not in start.done
        ]
        make_run_dir(start.run)
        self._lock = lock_run_dir(start.run.path)
        self._cap(start)
        self._todo = len(todo)
        work = self._work(start, todo, on_result)
        if work.ending == "complete":
            try:
                return self._finish(start, work)
            except OSError as exc:  # every case is journalled: a resume only finishes the run directory
                work.ending, work.error = "failed", exc
        start.manifest.stopped_reason = self._money_advice(start, work)
        self._mark_interrupted(start)
        raise self._why_stopped(start, work, resume)

    def _cap(self, start: Start) -> None:
        """The run's spending cap, with what its earlier sessions spent, made before any worker is forked."""
        manifest = start.manifest
        manifest.prompt_cache = self.options.prompt_cache
        cap = self.options.max_cost if self.options.max_cost is not None else manifest.max_cost_usd
        manifest.max_cost_usd = cap
        self.context.spending_cap = None
        if cap is not None and self._calls_claude():
            from evalkit._client import SpendingCap

            spent = spent_before(start.run, manifest.run_id) if start.before is not None else 0.0
            self.context.spending_cap = SpendingCap(cap, spent)

    def _calls_claude(self) -> bool:
        return isinstance(self.system, ClaudeSystem) or self.judge is not None

    def _check_ready(self) -> None:
        """Fail before the run directory exists, not halfway through."""
        if self._calls_claude():
            self.cache.check_writable()
            self.cache.check_readable()  # a replay with no cache to read would only give replay misses
            if getattr(self.context.client_made, "prices", None) is None:
                from evalkit._client import current_prices  # the SDK loads only for a run that calls Claude

                current_prices()  # a bad EVALKIT_PRICES file fails here, not once in every case
        if self.options.max_cost is not None and self._calls_claude():
            self._check_priced()
        if self.options.batch and self.cache.mode.value != "readwrite":
            raise EvalkitError("--batch fills the response cache, so it needs --cache readwrite")

    def _check_priced(self) -> None:
        """A cap that cannot be checked is not a cap: every model the run calls must have a known price."""
        from evalkit._client import cost_usd

        models = [self.system.model] if isinstance(self.system, ClaudeSystem) else []
        if self.judge is not None and self.suite.config.judge is not None:
            models.append(self.suite.config.judge.model)
        unknown = [m for m in models if cost_usd(m, {"input_tokens": 1}) is None]
        if unknown:
            raise EvalkitError(
                f"--max-cost needs the price of every model the run calls; {', '.join(unknown)} has none. Add it "
                "with EVALKIT_PRICES (see docs/cost.md), or run without --max-cost"
            )

    def _work(
        self, start: Start, todo: list[tuple[Case, int]], on_result: Callable[[CaseResult], None] | None
    ) -> _Work:
        """Run the cases of `todo`; whatever stops them is caught and said in the result, not raised."""
        work = _Work()
        bar = None
        # the collector leaves alone what existed before the run (the suite, the SDK's modules): otherwise the
        # first burst of cases set off a full collection of all of it, about 90 ms; forked workers inherit this,
        # so theirs do not copy every inherited page either
        gc.freeze()
        try:
            self._fill_by_batch(start, todo)
            work.workers = self._fork(start, todo)
            # written while the workers' first calls are out: no result comes back before both are ready
            start.run.write_manifest(start.manifest)
            reached("run:started")
            work.journal = Journal(start.run.journal_path)
            bar = progress_bar(
                total=len(self.suite.cases) * start.manifest.repeats,
                initial=len(start.done),
                desc=self.suite.name,
                enabled=self.options.progress,
            )
            recorder = Recorder(work.journal, start.run.journal_path, self.totals, bar, on_result)
            if work.workers is not None:
                record_from_workers(work.workers, recorder)
            else:
                threads = min(self.options.concurrency, _WARM_THREADS) if self._warm else None
                run_in_threads(
                    self.context,
                    todo,
                    start.manifest.run_id,
                    recorder,
                    threads=threads,
                    cached_inline=self._warm,
                )
        except KeyboardInterrupt:
            work.ending = "interrupted"
        except _StopRun as exc:
            work.ending, work.error = "stopped", exc
        except Exception as exc:  # a worker that died, a disk that filled up, or a bug: marked, then raised
            work.ending, work.error = "failed", exc
        finally:
            gc.unfreeze()
            if work.workers is not None:
                work.workers.close(finished=False)  # a no-op once they have been stopped in order
            if work.journal is not None:
                # on a full disk the close fails to flush what the failed append left: resume cuts that line
                with contextlib.suppress(OSError):
                    work.journal.close()
            if bar is not None:
                bar.close()
        return work

    def _fill_by_batch(self, start: Start, todo: list[tuple[Case, int]]) -> None:
        if not (self.options.batch and todo and self._calls_claude()):
            return
        start.run.write_manifest(start.manifest)  # the batch ids go into it as batches are made
        try:
            self.batch_phases = prefill(self.context, todo, start.manifest, start.run)
        except CallError as exc:
            if exc.kind == "spending_cap":
                raise _SpendingCapReached(str(exc)) from None
            raise (_AuthFailure(str(exc)) if exc.kind == "auth" else _BatchFailure(str(exc))) from None

    def _fork(self, start: Start, todo: list[tuple[Case, int]]) -> CaseWorkers | None:
        """Worker processes for a run large enough to need them, forked before this process starts threads of
        its own (the progress bar's, the pool's)."""
        from evalkit._client import wait_for_preload

        wait_for_preload()  # an import in another thread must not be half done in the copies
        self._warm = self._calls_claude() and not self._will_call(todo)
        if self._warm:
            return None  # the cache has the answers: reading them is quicker here than in forked copies
        processes = self.context.processes()
        if processes <= 1 or len(todo) <= self.options.concurrency:
            return None
        if self._calls_claude():
            from evalkit._client import warm_up

            warm_up()  # once here, not once in every worker as its first wave of cases waits
        return CaseWorkers(self.context, processes, self.options.concurrency, start.manifest.run_id, todo)

    def _will_call(self, todo: list[tuple[Case, int]]) -> bool:
        """Whether running `todo` will call the API, judged from a sample: False when the response cache has the
        answer to each of a dozen requests spread over it.

        A warm rerun then imports no SDK (0.7 s) and forks no workers; a call the sample missed is still made, by
        the threads of this process. A judge is taken to call."""
        if not todo:
            return False  # a resume with every case journalled only finishes the run directory
        if self.judge is not None:
            return True
        mode = self.cache.mode.value
        if mode != "readwrite" or not isinstance(self.system, ClaudeSystem):
            return mode != "replay"  # a replay never calls: a miss is an error
        from evalkit._cache import MESSAGES_ENDPOINT, cache_key

        system = self.system
        if self.cache.remote is not None:
            # a cache on a store: what it holds comes down many at a time first, and a rerun on a new machine is
            # then as warm as one here (no SDK, no threads)
            self.cache.prefetch(
                cache_key(MESSAGES_ENDPOINT, system.build_request(case.input), repeat)
                for case, repeat in todo
            )
        step = max(1, len(todo) // _SAMPLE)
        sample = [*todo[::step], todo[-1]]
        return not all(
            self.cache.path_for(
                cache_key(MESSAGES_ENDPOINT, system.build_request(case.input), repeat)
            ).is_file()
            for case, repeat in sample
        )

    def _finish(self, start: Start, work: _Work) -> RunOutcome:
        assert work.journal is not None  # made before any case could finish
        manifest = start.manifest
        start.run.finish(work.journal, run_id=manifest.run_id)
        if work.workers is not None:
            work.workers.join()  # they exit while the run directory is finished
        manifest.status = "complete"
        manifest.ended_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        start.run.write_manifest(manifest)
        return RunOutcome(start.run.path, manifest, self.totals, resumed=len(start.done))

    def _mark_interrupted(self, start: Start) -> None:
        manifest = start.manifest
        # a resumed run that was complete still has a result for every case: it stays complete
        manifest.status = "complete" if start.was_complete else "interrupted"
        if start.before is not None and start.was_complete:
            manifest.ended_at = start.before.ended_at
        mark_manifest(start.run, manifest)

    def _money_advice(self, start: Start, work: _Work) -> str | None:
        """What to do about a run stopped for money (None for any other ending)."""
        error = work.error
        if isinstance(error, _SpendingCapReached) and self.context.spending_cap is not None:
            cap = self.context.spending_cap
            error.spent_usd, error.cap_usd = cap.spent_usd, cap.cap_usd
            error.left = self._todo - (self.totals.done - self.totals.errors)
            paid = self.totals.done - self.totals.cache_hits
            error.per_case_usd = self.totals.spent_usd / paid if paid > 0 else 0.0
        if isinstance(error, _SpendingCapReached | _SpendLimit):
            return error.advice(f"evalkit run --resume {start.run.path}")
        return None

    def _why_stopped(self, start: Start, work: _Work, resume: Path | None) -> BaseException:
        """The exception a run that did not complete ends with: what stopped it, and how to carry on."""
        then = f"evalkit run --resume {start.run.path}"
        error = work.error
        money = self._money_advice(start, work)
        if money is not None:
            return SpendingStopped(money)
        if isinstance(error, _StopRun):
            nothing_done = self.totals.done == self.totals.errors and not start.manifest.batch_ids
            if isinstance(error, _AuthFailure) and resume is None and nothing_done and discard(start.run):
                # bad credentials are bad input: every call so far was refused, and nothing is left behind
                return EvalkitError(error.advice("run the same command again"))
            return EvalkitError(error.advice(then))
        if isinstance(error, OSError | _WorkerStopped):
            stopped = EvalkitError(
                f"the run stopped: {error}. What finished is kept; once the cause is fixed: {then}"
            )
            stopped.__cause__ = error
            return stopped
        if error is not None:
            return error
        return KeyboardInterrupt(f"interrupted; finish with: {then}")
