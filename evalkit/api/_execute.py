"""`run`, `resume`, `run_async` and `estimate`: the one place a run is put together.

``evalkit run``, the live probes and a notebook all come through here, so a run is built the same way (the suite,
its system, the runner's options) whoever asks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from evalkit.api._stored import folder_or_url, published
from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit._runner import Estimate, RunOptions
    from evalkit._store import Location
    from evalkit._systems import RunnableSystem, System
    from evalkit.api._run import Run
    from evalkit.graders import Judge
    from evalkit.suite import Suite

CacheMode = Literal["readwrite", "replay", "refresh", "off"]
JudgeMode = Literal["auto", "on", "off"]
PromptCacheMode = Literal["on", "off", "5m", "1h"]
SystemLike = "System | Callable[[Any], Any] | str | Path | None"


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


def _check_counts(**counts: tuple[int | None, int]) -> None:
    for name, (value, least) in counts.items():
        if value is not None and value < least:
            raise EvalkitError(f"{name} must be at least {least}, not {value}")


def prepare(
    system: object, *, cache: str = "readwrite", cache_dir: str | Path | None = None, batch: bool = False
) -> None:
    """Start loading what a run of `system` will need, in the background: the SDK, when the run is sure to call
    Claude, loads while the suite does and the run directory is made, instead of after them. `run` calls it;
    a caller that loads suites first may call it sooner."""
    if batch or system != "claude" or cache == "replay":
        return
    if cache == "readwrite":
        from evalkit._cache import default_cache_dir
        from evalkit._store import is_url

        if cache_dir and is_url(cache_dir):
            return  # the store may answer every request: the runner fetches what it holds before it loads the SDK
        directory = Path(cache_dir) if cache_dir else default_cache_dir()
        try:
            with os.scandir(directory) as entries:
                if next(entries, None) is not None:
                    return  # it may answer every request: the runner looks before it loads the SDK
        except OSError:
            pass  # no cache yet: every request is a call
    from evalkit._client import preload

    preload()


class _Prefetch:
    """Given each result as it is recorded: the first starts importing what a run's summary needs, which the
    run's calls leave time for. Joined before the run returns (another run may fork)."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None

    def __call__(self, result: Any) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._load, daemon=True, name="evalkit-prefetch")
            self._thread.start()

    @staticmethod
    def _load() -> None:
        with contextlib.suppress(Exception):  # what fails to import fails again where it is used
            from evalkit._report import format_summary  # noqa: F401

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()


def _execute(suite: Suite, system: RunnableSystem, options: RunOptions, resume: Path | None = None) -> Run:
    """Run (or finish) `suite` against `system`: the runner, then the run read back from its directory."""
    from evalkit._runner import Runner
    from evalkit.api._run import Run

    if options.processes is None and "ipykernel" in sys.modules:
        options.processes = 1  # forking a Jupyter kernel is not safe
    if _uses_store(options):
        options.processes = 1  # the store client's I/O threads do not survive a fork
    prefetch = _Prefetch()
    try:
        outcome = Runner(suite, system, options).run(resume=resume, on_result=prefetch)
    finally:
        prefetch.join()
    return Run(outcome.run_dir, suite=suite)


def _uses_store(options: RunOptions) -> bool:
    from evalkit._store import is_url, started_here

    return started_here() or (options.cache_dir is not None and is_url(options.cache_dir))


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
    prompt_cache: PromptCacheMode | None = None,
    max_cost: float | None = None,
    shard: tuple[int, int] | None = None,
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
    prompt_cache:
        ``"on"``, ``"off"``, ``"5m"`` or ``"1h"``: mark each request's stable prefix for the API's prompt cache
        (default: the suite's ``prompt_cache``, on). It changes what calls cost, never their answers.
    max_cost:
        Dollars the run may spend: no call is sent whose worst case would pass it; the run stops with
        `SpendingStopped`, saying how to resume with a higher cap.
    shard:
        ``(I, N)``: run only shard I of N (cases split by a hash of their id, the same on every machine); join the
        N runs with `merge_runs` (``evalkit merge``) before gating.

    Returns
    -------
    Run
        The run, read from its directory. A run stopped part-way raises, with the ``resume`` call that
        finishes it.
    """
    from evalkit._runner import RunOptions

    _check_counts(repeats=(repeats, 1), concurrency=(concurrency, 1), max_retries=(max_retries, 0))
    _check_money(prompt_cache, max_cost)
    prepare(system, cache=cache, cache_dir=cache_dir, batch=batch)
    loaded = _suite(suite)
    chosen = as_run_system(system, loaded)
    _check_batch(chosen, batch, loaded)
    if shard is not None:
        loaded = _shard_of(loaded, shard)
    where, run_id = _store_target(loaded, out, runs_dir)
    options = RunOptions(
        repeats=repeats,
        concurrency=concurrency,
        cache_mode=cache,
        cache_dir=folder_or_url(cache_dir),
        out_root=Path(runs_dir) if where is None else where.local.parent,
        run_dir=(Path(out) if out is not None else None) if where is None else where.local,
        run_id=run_id,
        judge=judge,
        progress=progress,
        batch=batch,
        max_retries=max_retries,
        processes=processes,
        prompt_cache=prompt_cache or loaded.config.prompt_cache,
        max_cost=max_cost,
        shard=shard,
    )
    if where is not None:
        target = where
        return published(lambda: _execute(loaded, chosen, options), target.local, target)
    return _execute(loaded, chosen, options)


def _store_target(
    suite: Suite, out: str | Path | None, runs_dir: str | Path
) -> tuple[Location | None, str | None]:
    """Where a run goes on a store (None: a local folder) and the id it is given there; checked before any call
    is paid for."""
    from evalkit._runner import new_run_id
    from evalkit._store import check_can_publish, is_url, parse_url

    run_id = None
    if out is not None:
        if not is_url(out):
            return None, None
        where = parse_url(out)
    elif is_url(runs_dir):
        run_id = new_run_id(suite.name)
        where = parse_url(runs_dir).child(run_id)
    else:
        return None, None
    check_can_publish(where)
    return where, run_id


def _shard_of(suite: Suite, shard: tuple[int, int]) -> Suite:
    index, of = shard
    try:
        part = suite.shard(index, of)
    except ValueError as exc:
        raise EvalkitError(f"--shard {index}/{of}: give I/N with 1 <= I <= N, e.g. --shard 1/3") from exc
    if not part.cases:
        raise EvalkitError(
            f"--shard {index}/{of}: no case of suite {suite.name} falls in it; use fewer shards"
        )
    return part


def resume(
    run_dir: str | Path,
    *,
    suite: str | Path | Sequence[str | Path] | None = None,
    system: str | None = None,
    repeats: int | None = None,
    judge: JudgeMode | None = None,
    out: str | Path | None = None,
    cache: CacheMode | None = None,
    cache_dir: str | Path | None = None,
    concurrency: int | None = None,
    batch: bool = False,
    max_retries: int = 4,
    processes: int | None = None,
    progress: bool = True,
    prompt_cache: PromptCacheMode | None = None,
    max_cost: float | None = None,
) -> Run:
    """Finish an interrupted run, or run its errored cases again, with the run's own settings.

    Parameters
    ----------
    run_dir:
        The run's directory.
    suite, system, repeats, judge, out:
        What the caller believes the run was; each given one must agree with the run's manifest, or an
        `EvalkitError` says which differ (a resumed run keeps its own settings).
    cache, cache_dir, concurrency:
        Default to the run's own: the responses it already paid for are in its own cache.
    batch:
        Send what is left through the Message Batches API; a batch run's batches are collected, not sent again.
    max_retries, processes, progress:
        As for `run`.
    prompt_cache:
        Default: as the run was started.
    max_cost:
        A new spending cap for the whole run (what it spent before counts); default: the run's own.

    Returns
    -------
    Run
        The finished run (the same directory).
    """
    from evalkit._results import RunDir
    from evalkit._runner import RunOptions, resume_conflicts
    from evalkit._systems import load_system
    from evalkit.suite import load_suite

    _check_counts(concurrency=(concurrency, 1), max_retries=(max_retries, 0))
    _check_money(prompt_cache, max_cost)
    from evalkit._store import is_url, parse_url, pull_run

    where = parse_url(run_dir) if is_url(run_dir) else None
    path = pull_run(where) if where is not None else Path(run_dir)
    manifest = RunDir(path).read_manifest()
    named = [suite] if isinstance(suite, str | Path) else list(suite or ())
    conflicts = resume_conflicts(
        manifest,
        path,
        suite_paths=[Path(s) for s in named],
        system=system,
        repeats=repeats,
        judge=judge,
        out=Path(out) if out is not None else None,
    )
    if conflicts:
        raise EvalkitError(
            f"--resume {run_dir}: {'; '.join(conflicts)}. A resumed run keeps its own settings: drop those "
            "options, or start a new run"
        )
    loaded = load_suite(manifest.suite_location())
    chosen = load_system(manifest.system.get("name", system), loaded)
    shard = (manifest.shard[0], manifest.shard[1]) if manifest.shard else None
    if shard is not None:
        loaded = _shard_of(loaded, shard)
    directory = cache_dir if cache_dir is not None else manifest.cache.get("directory")
    options = RunOptions(
        repeats=manifest.repeats,
        concurrency=concurrency if concurrency is not None else manifest.concurrency,
        cache_mode=cache or manifest.cache.get("mode") or "readwrite",
        cache_dir=folder_or_url(directory) if directory else None,
        run_dir=Path(out) if out is not None else None,
        judge=judge or ("on" if manifest.judge else "off"),
        progress=progress,
        # a batch run resumed with --cache replay (or off) reads what its batches put in the cache
        batch=batch or (bool(manifest.batch) and cache in (None, "readwrite")),
        max_retries=max_retries,
        processes=processes,
        prompt_cache=prompt_cache or cast(Any, manifest.prompt_cache) or loaded.config.prompt_cache,
        max_cost=max_cost if max_cost is not None else manifest.max_cost_usd,
        shard=shard,
    )
    if where is not None:
        target = where
        return published(lambda: _execute(loaded, chosen, options, resume=path), path, target)
    return _execute(loaded, chosen, options, resume=path)


def _check_batch(system: Any, batch: bool, suite: Suite) -> None:
    if batch and getattr(system, "tools", None):
        raise EvalkitError(
            f"suite {suite.name} has tools: each case runs a tool-use loop turn by turn, which the Message Batches "
            "API cannot carry; drop --batch"
        )


def _check_money(prompt_cache: str | None, max_cost: float | None) -> None:
    if prompt_cache is not None and prompt_cache not in ("on", "off", "5m", "1h"):
        raise EvalkitError(f"prompt_cache={prompt_cache!r}: use 'on', 'off', '5m' or '1h'")
    if max_cost is not None and not (isinstance(max_cost, int | float) and 0 < max_cost < float("inf")):
        raise EvalkitError(
            f"max_cost={max_cost!r}: a spending cap is a positive number of dollars, e.g. 5 or 0.50"
        )


async def run_async(
    suite: Suite | str | Path,
    system: System | Callable[[Any], Any] | str | Path | None = None,
    **options: Any,
) -> Run:
    """`run` for a running event loop (``await ek.run_async(...)`` in Jupyter): the run goes on a thread, so the
    kernel's loop stays free and no nest_asyncio is needed. Takes the same options as `run`."""
    return await asyncio.to_thread(run, suite, system, **options)


def estimate(
    suite: Suite | str | Path,
    system: System | Callable[[Any], Any] | str | Path | None = None,
    *,
    repeats: int = 1,
    judge: JudgeMode = "auto",
    cache: CacheMode = "readwrite",
    cache_dir: str | Path | None = None,
    batch: bool = False,
    max_retries: int = 4,
    max_cost: float | None = None,
) -> Estimate:
    """Tokens and dollars a run would spend, per grader kind, sending nothing but count_tokens requests.

    With ``ANTHROPIC_API_KEY`` or ``ANTHROPIC_BASE_URL`` set, tokens are counted by the API; offline they are
    estimated from characters. What the response cache already holds is counted as free, as the run will find
    it. ``str(estimate)`` (or ``.format()``) is the table ``evalkit run --dry-run`` prints; with `max_cost`, it
    says whether the run fits under that cap.
    """
    from evalkit._cache import ResponseCache
    from evalkit._runner import estimate_run

    _check_counts(repeats=(repeats, 1), max_retries=(max_retries, 0))
    loaded = _suite(suite)
    chosen = as_run_system(system, loaded)
    count = None
    if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL"):
        from evalkit._client import Client

        count = Client(max_retries=max_retries).count_tokens
    settings = None if judge == "off" else loaded.config.judge
    store = None if cache in ("off", "refresh") else ResponseCache(folder_or_url(cache_dir), mode=cache)
    _check_money(None, max_cost)
    found = estimate_run(
        loaded, chosen, repeats=repeats, judge=settings, count_tokens=count, batch=batch, cache=store
    )
    found.max_cost = max_cost
    return found


def suite_judge(
    suite: Suite | str | Path,
    system: System | Callable[[Any], Any] | str | Path | None = None,
    *,
    cache: CacheMode = "readwrite",
    cache_dir: str | Path | None = None,
    concurrency: int = 8,
    max_retries: int = 4,
) -> Judge:
    """The judge a run of `suite` grades with, built as `run` builds it: the suite's judge settings, the
    response cache, a client made on the first call. Its calls therefore share a run's cache entries (a probe's
    original verdicts are the run's, read back for free).
    """
    import warnings

    from evalkit._runner import RunContext, RunOptions
    from evalkit.graders import Judge

    loaded = _suite(suite)
    options = RunOptions(
        concurrency=concurrency,
        cache_mode=cache,
        cache_dir=folder_or_url(cache_dir),
        judge="on",
        progress=False,
        max_retries=max_retries,
        processes=1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the run said it already: a judge grading its own model
        made = RunContext.create(loaded, as_run_system(system, loaded), options).judge
    if not isinstance(made, Judge):
        raise EvalkitError(f"suite {loaded.name} has no judge checks: it has no judge to build")
    return made
