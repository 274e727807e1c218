"""User checks run in small worker processes, so one that loops, hangs or ends its process cannot stop a run.

A thread cannot be stopped from outside, so a time limit on user code needs a process. Each worker is forked
from this process once and then serves calls over a pipe: a call costs a round trip of pickled arguments, not a
fork (`bench/bench_user_checks.py` measures both). A call past its limit kills its worker; the next call
forks a fresh one. A worker knows the check functions that existed when it was forked, so a function registered
later (a notebook's `@evalkit.check`) is served by a newly forked worker.

Idle workers wait in a pool shared by the threads of a run; each thread takes one for the length of a call.
A worker exits when its parent does: waiting for a call, it sees its pipe close; busy in a check, a watcher
thread sees that its parent has gone.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection
from typing import Any

from evalkit.errors import CheckTimeout, UserCheckFailed
from evalkit.graders._limits import LIMIT_HINT, seconds

#: without fork (Windows) user checks run in-process, with no limit
CAN_FORK = hasattr(os, "fork")
# idle workers kept for reuse; more threads than this fork more, and the surplus is stopped when handed back
MAX_IDLE = max(2, min(8, os.cpu_count() or 2))
_PARENT_POLL_S = 0.5

_functions: list[
    Callable[..., Any]
] = []  # a function's index is its token; never shrinks, so tokens stay valid
_tokens: dict[int, int] = {}  # id(function) -> token (the list above keeps each function alive)
_idle: list[_Worker] = []
_live: set[_Worker] = set()
_lock = threading.Lock()


def _token(fn: Callable[..., Any]) -> int:
    with _lock:
        token = _tokens.get(id(fn))
        if token is None:
            token = len(_functions)
            _functions.append(fn)
            _tokens[id(fn)] = token
        return token


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(_PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(1)


def _serve(conn: Connection, parent: int) -> None:
    """The worker's loop: call the function a token names, send back its result or what it raised."""
    # Ctrl-C is the parent's to handle: it stops the worker it was waiting on
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    while True:
        try:
            token, value, case, params = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        try:
            reply: tuple[Any, ...] = ("ok", _functions[token](value, case, **params))
        except BaseException as exc:  # sys.exit() in a check is that check's error, as in-process
            reply = ("raised", type(exc).__name__, str(exc))
        try:
            conn.send(reply)
        except Exception as exc:  # an unpicklable result: nothing was written, so say why instead
            conn.send(("unsendable", type(reply[1]).__name__, f"{type(exc).__name__}: {exc}"))


class _Worker:
    """One forked process serving calls, and the functions it knows (those registered before its fork)."""

    def __init__(self) -> None:
        # os.fork, not multiprocessing.Process: a run's case workers are daemonic processes, which
        # multiprocessing does not let have children
        self.conn, child = multiprocessing.Pipe()
        self.knows = len(_functions)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker
            try:
                self.conn.close()
                _serve(child, parent)
            finally:
                os._exit(0)
        self.pid = pid
        self.exitcode: int | None = None
        child.close()
        _live.add(self)

    def call(
        self, token: int, value: Any, case: Any, params: dict[str, Any], limit: float
    ) -> tuple[Any, ...]:
        self.conn.send((token, value, case, params))
        if not self.conn.poll(limit):
            raise TimeoutError
        try:
            reply: tuple[Any, ...] = self.conn.recv()
        except (EOFError, OSError):
            raise ProcessLookupError from None
        return reply

    def reap(self, wait: float) -> int | None:
        """The worker's exit code once it has ended (negative: the signal that ended it), else None."""
        deadline = time.monotonic() + wait
        while self.exitcode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if pid:
                self.exitcode = os.waitstatus_to_exitcode(status)
            elif time.monotonic() >= deadline:
                return None
            else:
                time.sleep(0.005)
        return self.exitcode

    def stop(self) -> None:
        _live.discard(self)
        with contextlib.suppress(OSError):
            self.conn.close()
        if self.exitcode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self.reap(5)


def _take(token: int, family: Iterable[Callable[..., Any]]) -> _Worker:
    with _lock:
        for i in range(len(_idle) - 1, -1, -1):
            if _idle[i].knows > token:
                return _idle.pop(i)
    for sibling in family:  # a new worker knows them all, so a call to any of them needs no other fork
        _token(sibling)
    return _Worker()


def _give_back(worker: _Worker) -> None:
    with _lock:
        _idle.append(worker)
        surplus = _idle[:-MAX_IDLE] if len(_idle) > MAX_IDLE else []
        del _idle[: len(surplus)]
    for old in surplus:
        old.stop()


def _exit_status(worker: _Worker) -> str:
    code = worker.reap(1)
    if code is None:
        return "its worker process stopped answering"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"it ended its worker process with signal {signal.Signals(-code).name}"
        return f"it ended its worker process with signal {-code}"
    return f"it ended its worker process with os._exit({code})"


def call_user_check(
    name: str,
    fn: Callable[..., Any],
    value: Any,
    case: Any,
    params: dict[str, Any],
    *,
    limit: float,
    family: Iterable[Callable[..., Any]] = (),
) -> Any:
    """Call `fn(value, case, **params)` in a worker process, waiting at most `limit` seconds.

    `family` are the other checks that may be called next (the suite's): a worker forked for this call
    learns them too.

    Returns what the function returned. Raises CheckTimeout past the limit (the worker is stopped), and
    UserCheckFailed when the function raised or ended its process.
    """
    token = _token(fn)
    worker = _take(token, family)
    try:
        reply = worker.call(token, value, case, params, limit)
    except TimeoutError:
        worker.stop()
        raise CheckTimeout(
            f"user check {name!r} timed out after {seconds(limit)}: it was stopped; make it faster, or "
            f"{LIMIT_HINT} (check_timeout_s = 0 runs user checks in this process, without a limit)"
        ) from None
    except ProcessLookupError:
        status = _exit_status(worker)
        worker.stop()
        raise UserCheckFailed(f"user check {name!r}: {status}; return a verdict instead") from None
    except BaseException:  # Ctrl-C while waiting, or arguments that cannot be sent: this worker is done
        worker.stop()
        raise
    _give_back(worker)
    if reply[0] == "raised":
        raise UserCheckFailed(f"{reply[1]}: {reply[2]}")
    if reply[0] == "unsendable":
        raise UserCheckFailed(
            f"user check {name!r} returned a {reply[1]} that cannot be sent back from its worker process "
            f"({reply[2]}); return bool, (bool, str) or Grade"
        )
    return reply[1]


def stop_workers() -> None:
    """Stop every idle worker (they are forked again when needed)."""
    with _lock:
        idle = list(_idle)
        _idle.clear()
    for worker in idle:
        worker.stop()


def _forget_after_fork() -> None:
    # a forked child (a run's case worker, or a check worker itself) must not talk on its parent's pipes
    global _lock
    _lock = threading.Lock()
    for worker in list(_live):
        with contextlib.suppress(OSError):
            worker.conn.close()
    _live.clear()
    _idle.clear()


if CAN_FORK:
    os.register_at_fork(after_in_child=_forget_after_fork)
