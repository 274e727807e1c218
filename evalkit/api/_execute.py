"""`ek.run` and `ek.run_async`: the CLI's `evalkit run`, as a function a notebook calls."""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit._systems import RunnableSystem, System
    from evalkit.api._run import Run
    from evalkit.suite import Suite

SuiteLike = "Suite | str | Path"
SystemLike = "System | Callable[[Any], Any] | str | Path | None"
CacheMode = Literal["readwrite", "readonly", "replay", "off"]
JudgeMode = Literal["auto", "on", "off"]


def _suite(suite: Suite | str | Path) -> Suite:
    from evalkit.suite import Suite, load_suite

    return suite if isinstance(suite, Suite) else load_suite(Path(suite))


def _source_hash(fn: Callable[..., Any]) -> str | None:
    from evalkit._hashing import sha256_hex

    try:
        return sha256_hex(inspect.getsource(fn))[:12]
    except (OSError, TypeError):  # made with exec, or a builtin: nothing to hash, so resume cannot compare it
        return None


def as_run_system(system: System | Callable[[Any], Any] | str | Path | None, suite: Suite) -> RunnableSystem:
    """A system from what a notebook passes: a System, a plain function, a spec string or None (the default).

    A function takes a case's input and returns its output; it is named ``module:name`` in the manifest, and
    when it has no file of its own (a notebook cell) its source is hashed, so a resumed run can tell when it
    changed.
    """
    import dataclasses

    from evalkit._systems import ClaudeSystem, PythonSystem, as_system, load_system, python_system

    if system is None:
        return load_system(None, suite)
    if isinstance(system, PythonSystem | ClaudeSystem | str | Path) or not callable(system):
        return as_system(system, suite=suite)
    module = getattr(system, "__module__", None) or "python"
    made = python_system(system, name=f"{module}:{getattr(system, '__name__', type(system).__name__)}")
    if made.code_hash is None:
        made = dataclasses.replace(made, code_hash=_source_hash(system))
    return made


def run(
    suite: Suite | str | Path,
    system: System | Callable[[Any], Any] | str | Path | None = None,
    *,
    repeats: int = 1,
    concurrency: int = 8,
    cache: CacheMode = "readwrite",
    cache_dir: str | Path | None = None,
    judge: JudgeMode = "auto",
    out: str | Path | None = None,
    runs_dir: str | Path = "runs",
    batch: bool = False,
    max_retries: int = 4,
    processes: int | None = None,
    progress: bool = True,
) -> Run:
    """Run `suite` against `system` and return the run, as ``evalkit run`` does (same run directory).

    Parameters
    ----------
    suite:
        A loaded suite, or the path of a suite folder or cases file.
    system:
        A function taking a case's input and returning its output; ``"baseline"``, ``"claude"``,
        ``"module:function"`` or ``"path/file.py:function"``; None for the suite's default system.
    repeats, concurrency, cache, cache_dir, judge, out, runs_dir, batch, max_retries, processes:
        As the options of ``evalkit run`` (see ``evalkit run --help``). In a Jupyter kernel, worker processes
        are off unless `processes` asks for them (forking a kernel is not safe).
    progress:
        Show a progress bar (a notebook bar in Jupyter).

    Returns
    -------
    Run
        The run, read from its directory.
    """
    from evalkit._runner import Runner, RunOptions
    from evalkit.api._run import Run

    for name, value, least in (
        ("repeats", repeats, 1),
        ("concurrency", concurrency, 1),
        ("max_retries", max_retries, 0),
    ):
        if value < least:
            raise EvalkitError(f"{name} must be at least {least}, not {value}")
    loaded = _suite(suite)
    chosen = as_run_system(system, loaded)
    if processes is None and "ipykernel" in sys.modules:
        processes = 1
    options = RunOptions(
        repeats=repeats,
        concurrency=concurrency,
        cache_mode=cache,
        cache_dir=Path(cache_dir) if cache_dir is not None else None,
        out_root=Path(runs_dir),
        run_dir=Path(out) if out is not None else None,
        judge=judge,
        progress=progress,
        batch=batch,
        max_retries=max_retries,
        processes=processes,
    )
    outcome = Runner(loaded, chosen, options).run()
    return Run(outcome.run_dir, suite=loaded)


async def run_async(
    suite: Suite | str | Path,
    system: System | Callable[[Any], Any] | str | Path | None = None,
    **options: Any,
) -> Run:
    """`run` for a running event loop (``await ek.run_async(...)`` in Jupyter): the run goes on a thread, so the
    kernel's loop stays free and no nest_asyncio is needed. Takes the same options as `run`."""
    return await asyncio.to_thread(run, suite, system, **options)
