"""Coverage of the per-slice intervals by simulation: a small seeded grid of ``bench/coverage/slices.py``.

A printed 95% interval must hold the true value in 95% of simulated slices, to within the simulation's binomial
error (three standard errors below; the intervals are conservative at small n, so above is fine). A slice's
pass-rate interval is Wilson's, whose coverage at small n swings around 95% with the discrete count (exactly
91.85% at 5 cases and p = 0.1, 92.4% at 10 cases and p = 0.3, 97.0% at 5 cases and p = 0.3; Brown, Cai and
DasGupta 2001): it is held to Wilson's exact coverage, and that to the known dip.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from evalkit.stats import wilson_interval

ROOT = Path(__file__).resolve().parents[2]
SIMS = 400
SEED = 20261203
WILSON_DIP = 0.035  # the deepest known dip of Wilson's coverage below 95% at these sizes (91.85% at n = 5)


def _slices() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "coverage_slices", ROOT / "bench" / "coverage" / "slices.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


slices = _slices()


def _se(sims: int) -> float:
    return math.sqrt(0.95 * 0.05 / sims)


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return slices.table(
        SIMS,
        SEED,
        sizes=(5, 8, 10),
        rates=(0.1, 0.3, 0.5, 0.9),
        repeat_sizes=(8, 12),  # Newcombe's construction on case means below 10 cases, Student's t from 10
        repeat_pairs=((0.5, 0.1),),
        split_sizes=((40, 10),),
        split_pairs=((0.5, 0.5), (0.9, 0.7)),
    )


def _of(rows: list[dict[str, Any]], statistic: str) -> list[dict[str, Any]]:
    found = [r for r in rows if r["statistic"] == statistic]
    assert found, statistic
    return found


def test_the_rows_say_what_they_measure(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        assert set(r) == {"statistic", "setting", "nominal", "coverage", "sims"}
        assert r["nominal"] == 0.95 and r["sims"] == SIMS and 0.0 <= r["coverage"] <= 1.0


@pytest.mark.parametrize("statistic", [slices.CHANGE, slices.CHANGE_REPEATS, slices.SPLITS])
def test_change_intervals_cover(rows: list[dict[str, Any]], statistic: str) -> None:
    # a slice change clipped at the observed baseline rate fell to 62-80% at 8 cases when the rate moved far
    floor = 0.95 - 3 * _se(SIMS)
    low = [(r["setting"], r["coverage"]) for r in _of(rows, statistic) if r["coverage"] < floor]
    assert low == []


def test_the_old_clipping_is_what_lost_the_coverage(rows: list[dict[str, Any]]) -> None:
    before = {r["setting"]: r["coverage"] for r in _of(rows, slices.CHANGE_BEFORE)}
    assert before["8 cases, 0.5 -> 0.1"] < 0.75 and before["8 cases, 0.5 -> 0.5"] > 0.95


def _wilson_coverage(n: int, p: float) -> float:
    """Wilson's exact coverage at n trials and rate p: the chance of a count whose interval holds p."""
    total = 0.0
    for x in range(n + 1):
        ci = wilson_interval(x, n)
        assert ci is not None
        if ci.low - 1e-12 <= p <= ci.high + 1e-12:
            total += math.comb(n, x) * p**x * (1 - p) ** (n - x)
    return total


def test_slice_pass_rate_intervals_cover_as_wilsons_do(rows: list[dict[str, Any]]) -> None:
    # the printed per-slice interval is Wilson's, no more and no less: its simulated coverage is Wilson's exact
    # coverage within the simulation's error, and that never falls more than the known dip below 95%
    for r in _of(rows, slices.RATE):
        n, p = int(r["setting"].split()[0]), float(r["setting"].split()[-1])
        exact = _wilson_coverage(n, p)
        assert exact >= 0.95 - WILSON_DIP, r
        assert abs(r["coverage"] - exact) <= 3 * math.sqrt(exact * (1 - exact) / SIMS), (r, exact)


def test_slice_pass_rate_with_repeats_stays_near_95(rows: list[dict[str, Any]]) -> None:
    # Clustered by case, this interval runs 91-94% at 8 cases x 3 repeats (the full table is in
    # docs/statistics.md, Slices): the floor guards against losing the clustering (rows taken as independent
    # fall to 82-85% at some of these settings), it is not a claim of 95%.
    for r in _of(rows, slices.RATE_REPEATS):
        assert r["coverage"] >= 0.95 - WILSON_DIP - 3 * _se(SIMS), r
