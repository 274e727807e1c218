"""Model calls from worker processes, for large runs at high concurrency.

Python runs one thread at a time per process, and the SDK spends a millisecond or two of CPU on every call. At a
few dozen calls in flight against a fast endpoint that CPU, not the network, sets the pace. `CallWorkers` keeps a
few processes, each with its own client and a pool of threads, and hands them requests over queues; the runner
uses it like a client (`create`), and everything else (caching, grading, the journal) stays in the main process.
"""

from __future__ import annotations

import itertools
import multiprocessing
import threading
from concurrent.futures import Future
from typing import Any

from evalkit.client import CallResult, Client

_STOP = None


def _serve(requests: Any, results: Any, client: Client) -> None:
    while True:
        item = requests.get()
        if item is _STOP:
            return
        call_id, request = item
        try:
            results.put((call_id, True, client.create(request)))
        except BaseException as exc:  # handed back to the caller, whatever it is
            results.put((call_id, False, exc))


def _worker_main(requests: Any, results: Any, threads: int, client_kwargs: dict[str, Any]) -> None:
    client = Client(**client_kwargs)
    pool = [
        threading.Thread(target=_serve, args=(requests, results, client), daemon=True) for _ in range(threads)
    ]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    client.close()


class CallWorkers:
    """A client whose `create` calls run in `processes` worker processes with `threads` threads each.

    Other methods (count_tokens, batches) run on an ordinary client in this process: they are few.
    """

    def __init__(self, processes: int, threads: int, **client_kwargs: Any) -> None:
        if processes < 1 or threads < 1:
            raise ValueError("processes and threads must be at least 1")
        # fork: the workers start in milliseconds with evalkit already imported (spawn re-imports the SDK, ~0.5 s)
        ctx = multiprocessing.get_context("fork")
        self._requests: Any = ctx.Queue()
        self._results: Any = ctx.Queue()
        self._threads = threads
        self._procs = [
            ctx.Process(
                target=_worker_main,
                args=(self._requests, self._results, threads, client_kwargs),
                daemon=True,
                name=f"evalkit-calls-{i}",
            )
            for i in range(processes)
        ]
        for p in self._procs:
            p.start()
        self._pending: dict[int, Future[CallResult]] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._collector = threading.Thread(target=self._collect, daemon=True, name="evalkit-call-results")
        self._collector.start()
        self._local = Client(**client_kwargs)
        self._closed = False

    def _collect(self) -> None:
        while True:
            item = self._results.get()
            if item is _STOP:
                return
            call_id, ok, payload = item
            with self._lock:
                future = self._pending.pop(call_id, None)
            if future is None:
                continue
            if ok:
                future.set_result(payload)
            else:
                future.set_exception(payload)

    def create(self, request: dict[str, Any]) -> CallResult:
        if self._closed:
            raise RuntimeError("the call workers are closed")
        future: Future[CallResult] = Future()
        with self._lock:
            call_id = next(self._ids)
            self._pending[call_id] = future
        self._requests.put((call_id, dict(request)))
        return future.result()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._local, name)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for _ in range(len(self._procs) * self._threads):
            self._requests.put(_STOP)
        for p in self._procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
        self._results.put(_STOP)
        self._collector.join(timeout=10)
        with self._lock:
            for future in self._pending.values():
                future.set_exception(RuntimeError("the call workers stopped before answering"))
            self._pending.clear()
        self._local.close()

    def __enter__(self) -> CallWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
