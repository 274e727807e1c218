"""Whole cases run in worker processes, for large runs at high concurrency.

Python runs one thread at a time per process, and each case costs about a millisecond of CPU: the SDK's handling
of the call, the cache entry, grading. At a few dozen cases in flight against a fast endpoint that CPU, not the
network, sets the pace. `CaseWorkers` forks a few processes from a run context that is ready to go. Each takes its
share of the cases with the fork, in proportion to its threads (as many in all as the run's concurrency), and
its threads make the calls and grade; the last cases are held back in a shared queue, which an inbox thread in
each worker reads once its own share is done, so a worker whose calls ran slow is caught up by the others.

A thread writes its case's cache entry before it sends the result back and before it takes another case, so a
crash of either side loses at most the calls in flight: every answered call is cached (or journalled by the
parent), and a journalled result always has its response in the cache. A worker dies with its parent.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from evalkit._results import CaseResult
from evalkit._runner._context import RunContext
from evalkit._runner._execute import execute_case
from evalkit._runner._record import Recorder
from evalkit._runner._stops import _StopRun, cache_write_error
from evalkit.suite import Case

_STOP = None
# cases an inbox reads ahead, so a thread that asks rarely waits; held back from other workers, they can
# delay the end of a run by at most one case each
_READ_AHEAD = 1
# the share of the cases (past the first wave) held back in the shared queue, to even out the workers' ends:
# reading that queue costs each case a lock, a pipe read and a thread hand-off, so the rest go with the fork
_SHARED = 0.1
# how long an interrupted run waits for its workers' calls in flight before it stops them
_DRAIN_S = 5.0
# how often a worker looks for its parent where the kernel cannot tell it (no PR_SET_PDEATHSIG)
_PARENT_POLL_S = 0.5
_PR_SET_PDEATHSIG = 1


class _WorkerStopped(RuntimeError):
    """A worker process ended before its cases were done (killed, or out of memory).

    The runner raises an ``EvalkitError`` saying so in its place (this one is its cause)."""


class _Sender:
    """One worker's end of its results pipe, shared by its threads. Sends in the calling thread: no feeder
    thread to wake for every result, as a multiprocessing queue would."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    def send(self, item: Any) -> bool:
        """False once the parent has gone (its end of the pipe is closed)."""
        with self._lock:
            try:
                self._conn.send(item)
            except (BrokenPipeError, ConnectionResetError, EOFError):
                return False
        return True


class _Inbox:
    """A worker's supply of cases: one thread reads the shared queue, a case each time a thread asks.

    The shared queue's lock is held across its read: with every thread of every worker reading it, a reader
    that lost the CPU while holding it kept all the others waiting (4 ms per case on average, measured).
    The inbox stops reading once it has fetched a stop signal for each of its threads, so it never takes one
    meant for another worker, and is never inside a read (holding that lock) when its process exits.
    """

    def __init__(self, tasks: Any, threads: int, parent: int) -> None:
        self._tasks = tasks
        self._threads = threads
        self._parent = parent
        self._wanted = threading.Semaphore(_READ_AHEAD)  # see _READ_AHEAD
        self._closing = False
        self._ready: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._fetch, daemon=True, name="evalkit-inbox")
        self._thread.start()

    def _fetch(self) -> None:
        stops = 0
        orphaned = False
        while stops < self._threads:
            self._wanted.acquire()
            if self._closing:
                return
            item = _STOP
            while not orphaned:
                try:
                    item = self._tasks.get(timeout=1.0)
                    break
                except queue.Empty:
                    orphaned = os.getppid() != self._parent  # the parent is gone (killed): stop, not linger
            stops += item is _STOP
            self._ready.put(item)

    def get(self) -> Any:
        """The next (case index, repeat), or _STOP."""
        self._wanted.release()
        return self._ready.get()

    def close(self) -> None:
        """Called once every thread has returned: ends the reader (some threads may have left without a stop
        signal, when the parent went away)."""
        self._closing = True
        self._wanted.release()
        self._thread.join(timeout=5.0)


def _serve(
    ctx: RunContext,
    own: deque[tuple[int, int]],
    inbox: _Inbox,
    results: _Sender,
    run_id: str,
    parent: int,
    halt: Any,
) -> None:
    cases = ctx.suite.cases
    while True:
        try:
            item: tuple[int, int] | None = own.popleft()
        except IndexError:  # this worker's share is done: the held-back cases, then a stop signal
            item = inbox.get()
        if item is None or halt.value:  # a stop signal, or the run was interrupted: no new case
            return
        if os.getppid() != parent:
            return  # queued work of a killed run is not ours to pay for
        index, repeat = item
        try:
            # the cache entry is written here, before the result is sent and before the next call: what a
            # crash can lose is the calls in flight, never a queue of answered ones
            outcome: Any = execute_case(ctx, cases[index], repeat, run_id)
        except BaseException as exc:  # execute_case records system and grader errors itself; this is a bug
            outcome = RuntimeError(f"{type(exc).__name__}: {exc}")
        else:
            if cache_write_error(outcome) is not None:
                halt.value = 1  # every case left would be paid for, then lost: no worker takes another
        if not results.send(outcome):
            return


def _die_with(parent: int) -> None:
    """End this worker when its parent dies, whatever its threads are doing (a send to a full pipe, a call).

    Linux tells the worker itself (PR_SET_PDEATHSIG); elsewhere a thread watches the parent's pid."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # it died before the kernel was told
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="evalkit-parent-watch").start()


def _worker_main(
    ctx: RunContext,
    tasks: Any,
    conn: Connection,
    inherited: list[Connection],
    threads: int,
    own: list[tuple[int, int]],
    run_id: str,
    parent: int,
    halt: Any,
) -> None:
    _die_with(parent)
    # the read ends of the results pipes came with the fork: with them open here, a dead parent's pipe would
    # not break, and a send to it would wait for good once the pipe was full
    for reader in inherited:
        reader.close()
    # the parent stops a worker with SIGTERM: end at once, not through a handler inherited from the parent's CLI
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Ctrl-C reaches the whole process group: the parent decides, and lets the calls in flight finish (halt)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctx.in_worker(threads)
    sender = _Sender(conn)
    inbox = _Inbox(tasks, threads, parent)
    share = deque(own)  # popped by every thread: a deque's popleft needs no lock of ours
    pool = [
        threading.Thread(target=_serve, args=(ctx, share, inbox, sender, run_id, parent, halt), daemon=True)
        for _ in range(threads)
    ]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    inbox.close()
    conn.close()


def split_threads(concurrency: int, processes: int) -> list[int]:
    """Threads per process: `concurrency` in all, as even as can be, so no more cases are in flight than asked."""
    if concurrency < 1 or processes < 1:
        raise ValueError("concurrency and processes must be at least 1")
    processes = min(processes, concurrency)
    return [concurrency // processes + (i < concurrency % processes) for i in range(processes)]


def split_cases(
    items: list[Any], threads: list[int], shared: float = _SHARED
) -> tuple[list[list[Any]], list[Any]]:
    """Each process's own cases, in proportion to its threads, and the cases held back for whoever is free.

    The first wave (one case per thread) is always given out; of the rest, a `shared` part at the end, but at
    least one case per thread, is held back.
    """
    total = sum(threads)
    rest = max(0, len(items) - total)
    held = min(rest, max(total, round(rest * shared)))
    given, held_back = items[: len(items) - held], items[len(items) - held :]
    bounds = [0] + [round(len(given) * upto / total) for upto in itertools.accumulate(threads)]
    return [given[a:b] for a, b in itertools.pairwise(bounds)], held_back


class CaseWorkers:
    """Forked copies of a run's context that run the (case, repeat) pairs `todo`, `concurrency` at a time between them.

    Each process's share of the cases goes with the fork, so the first wave starts at once; the last few are
    queued for whichever process is free first (`split_cases`).
    """

    def __init__(
        self, ctx: RunContext, processes: int, concurrency: int, run_id: str, todo: list[tuple[Case, int]]
    ) -> None:
        index = {id(case): i for i, case in enumerate(ctx.suite.cases)}
        items: list[tuple[int, int]] = [(index[id(case)], repeat) for case, repeat in todo]
        # fork: the copies start in milliseconds with the suite, system and cache already loaded
        mp = multiprocessing.get_context("fork")
        self._tasks: Any = mp.Queue()
        # set by halt(): the workers take no new case (a byte of shared memory, read without a lock)
        self._halt: Any = mp.Value("b", 0, lock=False)
        self._threads = split_threads(concurrency, processes)
        self._procs: list[Any] = []
        self._readers: dict[Connection, Any] = {}
        shares, self._rest = split_cases(items, self._threads)
        self._count = len(items)
        for i, (threads, own) in enumerate(zip(self._threads, shares, strict=True)):
            reader, writer = mp.Pipe(duplex=False)
            proc = mp.Process(
                target=_worker_main,
                args=(
                    ctx,
                    self._tasks,
                    writer,
                    [*self._readers, reader],
                    threads,
                    own,
                    run_id,
                    os.getpid(),
                    self._halt,
                ),
                daemon=True,
                name=f"evalkit-cases-{i}",
            )
            proc.start()
            # the worker holds the only write end, so its exit shows here as end-of-file (made and closed before
            # the next fork, so no later worker inherits it)
            writer.close()
            self._procs.append(proc)
            self._readers[reader] = proc
        self._closed = False

    def results(self) -> Iterator[CaseResult]:
        """Every case's result, in the order they finish."""
        for item in self._rest:
            self._tasks.put(item)
        self._rest = []
        received = 0
        while received < self._count:
            ready = wait(list(self._readers), timeout=1.0)
            if not ready:
                self._check_alive()
                continue
            for reader in ready:
                assert isinstance(reader, Connection)
                try:
                    item = reader.recv()
                except EOFError:
                    proc = self._readers.pop(reader)
                    proc.join(timeout=1.0)
                    raise self._stopped(proc) from None
                if isinstance(item, BaseException):
                    raise item
                received += 1
                yield item

    def drain(self, timeout: float) -> Iterator[CaseResult]:
        """After an interrupt: the workers take no new case, and the results of the calls in flight come back.

        Stops after `timeout` seconds, or once every worker has sent what it had and exited."""
        self._halt.value = 1
        for _ in range(sum(self._threads)):  # threads waiting on the shared queue get a stop signal
            self._tasks.put(_STOP)
        deadline = time.monotonic() + timeout
        readers = [r for r in self._readers if not r.closed]
        while readers and (left := deadline - time.monotonic()) > 0:
            for reader in wait(readers, timeout=left):
                assert isinstance(reader, Connection)
                try:
                    item = reader.recv()
                except (EOFError, OSError):
                    readers.remove(reader)
                    continue
                if not isinstance(item, BaseException):
                    yield item

    def _check_alive(self) -> None:
        for proc in self._procs:
            if not proc.is_alive():
                raise self._stopped(proc)

    @staticmethod
    def _stopped(proc: Any) -> _WorkerStopped:
        return _WorkerStopped(
            f"worker process {proc.name} stopped (exit code {proc.exitcode}); "
            "resume the run, with --processes 1 if it happens again"
        )

    def close(self, finished: bool = True) -> None:
        """Stop the workers: after the queued cases when `finished`, at once otherwise (an interrupt).

        A finished close only tells them to stop; `join` waits for them, so the caller can do its own last
        work while they exit."""
        if self._closed:
            return
        self._closed = True
        if finished:
            for _ in range(sum(self._threads)):
                self._tasks.put(_STOP)
        else:
            for p in self._procs:
                p.terminate()
        for reader in self._readers:
            reader.close()
        if not finished:
            self.join()

    def join(self, timeout: float = 5.0) -> None:
        """Wait for stopped workers to exit; end any that are still running after `timeout` seconds."""
        for p in self._procs:
            p.join(timeout=timeout)
            if p.is_alive():
                p.terminate()
                p.join(timeout=timeout)
        self._tasks.close()


def record_from_workers(workers: CaseWorkers, recorder: Recorder) -> None:
    """Record every result the workers send; on Ctrl-C, first those of the calls in flight (they are paid for)."""
    finished = False
    try:
        for result in workers.results():
            recorder.record(result)
        finished = True
    except KeyboardInterrupt:
        # the calls in flight finish and are journalled; a second Ctrl-C stops at once
        with contextlib.suppress(KeyboardInterrupt, _StopRun):
            for result in workers.drain(_DRAIN_S):
                recorder.record(result)
        raise
    except _StopRun:
        # the run stops (a spending cap, a refused key): what the workers have in flight was paid for, so it is
        # journalled too, each result on its own (a second stop among them must not drop the rest)
        with contextlib.suppress(KeyboardInterrupt):
            for result in workers.drain(_DRAIN_S):
                with contextlib.suppress(_StopRun):
                    recorder.record(result)
        raise
    finally:
        workers.close(finished)
