"""The plugin's settings: each command-line option, else its ini option, else the default."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass(frozen=True)
class Settings:
    suites: tuple[str, ...]
    system: str | None
    baseline: str | None
    judge: str
    runs_dir: Path
    repeats: int
    concurrency: int
    cache: str
    resume: Path | None


def _pick(config: pytest.Config, name: str) -> Any:
    given = config.getoption(name, default=None)
    if given not in (None, [], ""):
        return given
    ini = config.getini(name)
    return ini if ini not in (None, [], "") else None


def _count(config: pytest.Config, name: str, default: int) -> int:
    value = _pick(config, name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise pytest.UsageError(f"{name} must be a whole number, not {value!r}") from None
    if number < 1:
        raise pytest.UsageError(f"{name} must be at least 1, not {number}")
    return number


def settings_of(config: pytest.Config) -> Settings:
    """The settings of this pytest session; a bad value is a usage error naming the option."""
    suites = tuple(str(s) for s in (_pick(config, "evalkit_suites") or ()))
    judge = _pick(config, "evalkit_judge") or "auto"
    cache = _pick(config, "evalkit_cache") or "readwrite"
    if judge not in ("auto", "on", "off"):
        raise pytest.UsageError(f"evalkit_judge must be auto, on or off, not {judge!r}")
    if cache not in ("readwrite", "replay", "refresh", "off"):
        raise pytest.UsageError(f"evalkit_cache must be readwrite, replay, refresh or off, not {cache!r}")
    runs_dir = _pick(config, "evalkit_runs_dir")
    return Settings(
        suites=suites,
        system=_pick(config, "evalkit_system"),
        baseline=_pick(config, "evalkit_baseline"),
        judge=judge,
        runs_dir=Path(runs_dir) if runs_dir else config.rootpath / "runs",
        repeats=_count(config, "evalkit_repeats", 1),
        concurrency=_count(config, "evalkit_concurrency", 8),
        cache=cache,
        resume=Path(resume) if (resume := config.getoption("evalkit_resume", default=None)) else None,
    )
