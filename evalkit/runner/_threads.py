"""Cases run in a thread pool of this process, `concurrency` at a time.

A thread pool rather than an event loop, so the same code runs from a terminal, from CI and from a notebook whose
kernel already owns an event loop.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from evalkit.results import CaseResult
from evalkit.runner._context import RunContext
from evalkit.runner._execute import execute_case
from evalkit.runner._record import Recorder
from evalkit.runner._stops import StopRun
from evalkit.suite import Case


def run_in_threads(ctx: RunContext, todo: list[tuple[Case, int]], run_id: str, recorder: Recorder) -> None:
    """Run and record every (case, repeat) of `todo`; on an interrupt, the calls in flight are recorded first."""
    workers = max(1, ctx.options.concurrency)
    pending: set[Future[CaseResult]] = set()
    # submit lazily (at most 2 x workers queued) so a 10,000-case run never holds 10,000 futures
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evalkit") as pool:
        try:
            for case, repeat in todo:
                pending.add(pool.submit(execute_case, ctx, case, repeat, run_id))
                if len(pending) >= 2 * workers:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        recorder.record(fut.result())
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    recorder.record(fut.result())
        except BaseException:
            for f in pending:
                f.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            # the calls that were in flight have finished (and been paid for): journal them, so a resume
            # neither counts them as cache hits nor loses what they cost
            for f in pending:
                if f.done() and not f.cancelled() and f.exception() is None:
                    with contextlib.suppress(StopRun):
                        recorder.record(f.result())
            raise
