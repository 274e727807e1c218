"""Coverage and power by simulation, with and without repeats: a small seeded grid of bench/coverage/repeats.py.

Each interval's coverage must be within binomial error of 95% (the 99% interval of the measured coverage reaches
95%), and the significance flag's power at the MDE evalkit reports must be at least 78% within binomial error.
``python bench/coverage/repeats.py`` prints the full grid (docs/statistics.md, "Pass rates and repeats").
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from evalkit.stats import wilson_interval

ROOT = Path(__file__).resolve().parents[2]
SIMS = 240


def _bench() -> ModuleType:
    path = ROOT / "bench" / "coverage" / "repeats.py"
    spec = importlib.util.spec_from_file_location("bench_coverage_repeats", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _bench()


def _within_error(share: float, target: float, sims: int) -> bool:
    """Whether ``share`` of ``sims`` is not clearly below ``target``: the 99% Wilson interval reaches it."""
    ci = wilson_interval(round(share * sims), sims, confidence=0.99)
    return ci is not None and ci.high >= target


COVERAGE = [
    (bench.pass_rate_coverage, (50, 1, 0.3, 2.0)),
    (bench.pass_rate_coverage, (50, 3, 0.5, 2.0)),
    (bench.pass_rate_coverage, (200, 5, 0.1, 0.5)),
    (bench.paired_change_coverage, (50, 3, 3, 0.5, 2.0, -0.1)),
    (bench.paired_change_coverage, (200, 5, 5, 0.1, 20.0, 0.0)),
]
POWER = [
    (bench.power_at_single_run_mde, (100, 1, 0.5, 2.0)),
    (bench.power_at_single_run_mde, (50, 3, 0.3, 20.0)),
    (bench.power_at_paired_mde, (200, 1, 0.5, 20.0)),
    (bench.power_at_paired_mde, (50, 3, 0.5, 2.0)),
]


def _ids(cases: list[tuple[Any, tuple[Any, ...]]]) -> list[str]:
    return [f"{fn.__name__}{args}" for fn, args in cases]


@pytest.mark.parametrize(("fn", "args"), COVERAGE, ids=_ids(COVERAGE))
def test_intervals_cover_at_their_nominal_level(fn: Any, args: tuple[Any, ...]) -> None:
    row = fn(*args, SIMS, np.random.default_rng(23))
    assert set(row) >= {"statistic", "setting", "nominal", "coverage", "sims"} and row["sims"] == SIMS
    assert _within_error(row["coverage"], 0.95, SIMS), row


@pytest.mark.parametrize(("fn", "args"), POWER, ids=_ids(POWER))
def test_the_flag_has_its_stated_power_at_the_reported_mde(fn: Any, args: tuple[Any, ...]) -> None:
    row = fn(*args, SIMS, np.random.default_rng(23))
    assert row["nominal"] == 0.8 and row["power"] is not None and 0.0 < row["mde"] < 0.5
    assert _within_error(row["power"], 0.78, SIMS), row
