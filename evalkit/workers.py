"""Whole cases run in worker processes, for large runs at high concurrency.

Python runs one thread at a time per process, and each case costs a few milliseconds of CPU: the SDK's handling
of the call, the cache entry, grading. At a few dozen cases in flight against a fast endpoint that CPU, not the
network, sets the pace. `CaseWorkers` forks a few processes from a runner that is ready to go; each runs cases with
its own client and a pool of threads, writes cache entries itself, and sends back finished results. The parent
only journals them, so a crash of either side loses nothing that was journalled, and a response that reached the
cache is not paid for again on resume.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.results import CaseResult
    from evalkit.runner import Runner

_STOP = None


def _serve(runner: Runner, tasks: Any, results: Any, run_id: str, parent: int) -> None:
    cases = runner.suite.cases
    while True:
        try:
            item = tasks.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent:
                return  # the parent is gone (killed): stop rather than linger
            continue
        if item is _STOP:
            return
        if os.getppid() != parent:
            return  # queued work of a killed run is not ours to pay for
        index, repeat = item
        try:
            results.put(runner.run_one(cases[index], repeat, run_id))
        except BaseException as exc:  # run_one records system and grader errors itself; this is a bug
            results.put(exc)


def _worker_main(runner: Runner, tasks: Any, results: Any, threads: int, run_id: str, parent: int) -> None:
    runner.in_worker()
    # never wait at exit to flush into a pipe whose reader may be gone (a killed parent)
    results.cancel_join_thread()
    pool = [
        threading.Thread(target=_serve, args=(runner, tasks, results, run_id, parent), daemon=True)
        for _ in range(threads)
    ]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


class CaseWorkers:
    """`processes` forked copies of a runner, each running cases on `threads` threads."""

    def __init__(self, runner: Runner, processes: int, threads: int, run_id: str) -> None:
        if processes < 1 or threads < 1:
            raise ValueError("processes and threads must be at least 1")
        # fork: the copies start in milliseconds with the suite, system and cache already loaded
        ctx = multiprocessing.get_context("fork")
        self._tasks: Any = ctx.Queue()
        self._results: Any = ctx.Queue()
        self._threads = threads
        self._procs = [
            ctx.Process(
                target=_worker_main,
                args=(runner, self._tasks, self._results, threads, run_id, os.getpid()),
                daemon=True,
                name=f"evalkit-cases-{i}",
            )
            for i in range(processes)
        ]
        for p in self._procs:
            p.start()
        self._index = {id(case): i for i, case in enumerate(runner.suite.cases)}
        self._closed = False

    def submit(self, case: Any, repeat: int) -> None:
        self._tasks.put((self._index[id(case)], repeat))

    def results(self, count: int) -> Iterator[CaseResult]:
        """The next `count` finished results, in the order they finish."""
        for _ in range(count):
            while True:
                try:
                    item = self._results.get(timeout=1.0)
                    break
                except queue.Empty:
                    dead = [p for p in self._procs if not p.is_alive()]
                    if dead:
                        raise RuntimeError(
                            f"worker process {dead[0].name} stopped (exit code {dead[0].exitcode}); "
                            "resume the run, with --processes 1 if it happens again"
                        ) from None
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self, finished: bool = True) -> None:
        """Stop the workers: after the queued cases when `finished`, at once otherwise (an interrupt)."""
        if self._closed:
            return
        self._closed = True
        if finished:
            for _ in range(len(self._procs) * self._threads):
                self._tasks.put(_STOP)
        for p in self._procs:
            if finished:
                p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
        self._tasks.close()
        self._results.close()
