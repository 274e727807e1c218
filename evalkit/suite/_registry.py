"""User checks: functions a suite registers with ``@evalkit.check("name")`` in its own Python file.

A team can reuse the invariant checks its live code already runs. Each suite's file is imported into its own
registry, so two suites may use the same check name without clashing.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

UserCheckFn = Callable[..., Any]

_GLOBAL: dict[str, UserCheckFn] = {}
_current: ContextVar[dict[str, UserCheckFn] | None] = ContextVar("evalkit_user_checks", default=None)


def check(name: str) -> Callable[[UserCheckFn], UserCheckFn]:
    """Register `fn(value, case, **params)` as the user check `name`.

    The function returns a bool, a ``(passed, detail)`` pair, or a :class:`evalkit.graders._grade.Grade`.
    """
    if not name or not isinstance(name, str):
        raise ValueError("a user check needs a non-empty name: @evalkit.check('my_check')")

    def register(fn: UserCheckFn) -> UserCheckFn:
        target = _current.get()
        (target if target is not None else _GLOBAL)[name] = fn
        return fn

    return register


@contextmanager
def _collecting(into: dict[str, UserCheckFn]) -> Iterator[None]:
    token = _current.set(into)
    try:
        yield
    finally:
        _current.reset(token)


@dataclass
class UserModule:
    """A suite's own Python file once imported: its checks and its module namespace (for pydantic models)."""

    path: Path
    module: ModuleType | None
    checks: dict[str, UserCheckFn] = field(default_factory=dict)

    def lookup(self, name: str) -> UserCheckFn | None:
        return self.checks.get(name) or _GLOBAL.get(name)

    def model(self, name: str) -> Any:
        return getattr(self.module, name, None) if self.module is not None else None


def load_user_module(path: Path) -> UserModule:
    """Import a suite's checks file into a private registry. Import errors propagate to the caller."""
    path = path.resolve()
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    mod_name = f"evalkit_suite_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    checks: dict[str, UserCheckFn] = {}
    sys.modules[mod_name] = module
    # importing must leave the suite folder as it was: no __pycache__ next to the user's files
    writes_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        with _collecting(checks):
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return UserModule(path=path, module=module, checks=checks)


#: checks.py gets this many times a suite's check_timeout_s to finish importing (it may import big libraries)
IMPORT_TIMEOUT_FACTOR = 6


def _import_in_child(path: Path, conn: Any) -> None:
    try:
        load_user_module(path)
    except BaseException as exc:  # sys.exit() too: the parent reports it as an import error
        conn.send(f"{type(exc).__name__}: {exc}")
    else:
        conn.send(None)


def probe_user_module(path: Path, *, timeout_s: float) -> str | None:
    """Import a checks file in a forked child first, so one that ends or hangs its process cannot end or hang
    this one. Returns what went wrong (worded for a problem), or None when it imports.

    Without fork (Windows), the file is not probed: it is imported in this process as before.
    """
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    reader, writer = multiprocessing.Pipe(duplex=False)
    # os.fork, not multiprocessing.Process: validate may itself run in a daemonic worker process
    pid = os.fork()
    if pid == 0:
        try:
            reader.close()
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            # what the file prints at import shows once, from the import in this process that follows
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            sys.stdout = sys.stderr = open(devnull, "w")  # noqa: SIM115  # ends with the child
            _import_in_child(path, writer)
        finally:
            os._exit(0)
    writer.close()
    try:
        if not reader.poll(timeout_s):
            os.kill(pid, signal.SIGKILL)
            return (
                f"did not finish importing within {timeout_s:g} s (a loop or a wait at import?); "
                "importing it must only define checks and models"
            )
        try:
            said: str | None = reader.recv()
        except EOFError:
            code = _exit_code(pid)
            if code is not None and code < 0:
                return f"importing it ended the process with signal {code_name(-code)}"
            return f"importing it ended the process with os._exit({code})"
        if said is not None:
            return f"failed to import: {said}"
        return None
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        raise
    finally:
        reader.close()
        _exit_code(pid)


def code_name(number: int) -> str:
    with contextlib.suppress(ValueError):
        return signal.Signals(number).name
    return str(number)


def _exit_code(pid: int, wait: float = 5.0) -> int | None:
    """Reap the child; its exit code (negative: the signal that ended it), or None if it will not end."""
    deadline = time.monotonic() + wait
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.005)


def global_checks() -> dict[str, UserCheckFn]:
    """Checks registered outside any suite file (e.g. in a notebook)."""
    return dict(_GLOBAL)
