"""User checks: functions a suite registers with ``@evalkit.check("name")`` in its own Python file.

A team can reuse the invariant checks its live code already runs. Each suite's file is imported into its own
registry, so two suites may use the same check name without clashing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
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


def global_checks() -> dict[str, UserCheckFn]:
    """Checks registered outside any suite file (e.g. in a notebook)."""
    return dict(_GLOBAL)
