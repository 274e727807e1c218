"""Coverage and power with and without repeats: the pass rate's interval, the paired change's interval, and the
power of evalkit's significance flag at the minimum detectable effect it reports.

The model: a suite of n cases, each with its own true pass rate p_i ~ Beta(rate * phi, (1 - rate) * phi), run k
times. ``rate`` is the population pass rate (what an interval is meant to cover: the cases are drawn afresh for
each simulated data set) and ``phi`` the per-case heterogeneity: at phi 0.5 almost every case passes or fails
every time and a few are flaky (a typical LLM suite), at phi 20 every case is about equally flaky. A change moves
every case on the logit scale, logit(p_i) + beta, with beta set so that the population rate moves by the change
(computed on 20,000 quantiles of the Beta): cases near 0 or 1 barely move, flaky ones move most.

Every number comes from evalkit's own functions on verdict frames: ``pass_rate`` (Wilson, one repeat) and
``clustered_pass_rate`` (repeats), ``compare_runs`` (the paired change's interval and its ``significant`` flag,
which the report's stars and ``--require-significant`` use) and ``estimate_mde`` (the MDE the report prints: the
paired one against a baseline, the single-run one without). Power is measured for a change towards 1/2, the
direction in which a rate's variance grows (a drop at 50%):

* at the single-run MDE: the median MDE ``estimate_mde(run)`` reports for a run of the design, then the share of
  comparisons of two such runs, the second changed by that much, that evalkit calls significant;
* at the paired MDE: the MDE reported from a comparison depends on the change it contains, so the change is set to
  the fixed point of the median reported MDE (from a rerun, three rounds of "report the MDE of a change of the
  last median"), and the power is measured there. The report falls back to the single-run MDE when the paired
  one is 0 (no case moved), and so does this.

``python bench/coverage/repeats.py [SIMS] [SEED] [coverage|power|all]`` prints the full table (default 1000
simulated data sets a row, seed 23, every family).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

import numpy as np
import polars as pl

from evalkit.stats import clustered_pass_rate, compare_runs, estimate_mde, pass_rate

NOMINAL = 0.95
POWER = 0.8
SIZES = (20, 50, 200)
REPEATS = (1, 3, 5)
RATES = (0.1, 0.3, 0.5, 0.9)
PHIS = (0.5, 2.0, 20.0)
CHANGE = 0.1
"""The true change behind the paired-interval rows (besides none), towards 1/2."""
_QUANTILES = 20_000
_ROUNDS = 3


def _beta(rng: np.random.Generator, n: int, rate: float, phi: float) -> np.ndarray:
    return rng.beta(rate * phi, (1.0 - rate) * phi, size=n)


def _moved(p: np.ndarray, beta: float) -> np.ndarray:
    q = np.clip(p, 1e-15, 1.0 - 1e-15)
    return 1.0 / (1.0 + np.exp(-(np.log(q / (1.0 - q)) + beta)))


@cache
def _grid(rate: float, phi: float) -> np.ndarray:
    from scipy import stats

    return stats.beta.ppf((np.arange(_QUANTILES) + 0.5) / _QUANTILES, rate * phi, (1.0 - rate) * phi)


@cache
def logit_shift(rate: float, phi: float, change: float) -> float:
    """The logit shift that moves the population pass rate by ``change``."""
    from scipy.optimize import brentq

    if change == 0.0:
        return 0.0
    p = _grid(rate, phi)
    base = float(p.mean())
    return float(brentq(lambda b: float(_moved(p, b).mean()) - base - change, -60.0, 60.0, xtol=1e-12))


def _towards_half(rate: float) -> float:
    return 1.0 if rate < 0.5 else -1.0


def _room(rate: float) -> float:
    """The largest change towards 1/2 and past it that a pass rate can make, with a margin for the logit model."""
    return 0.95 * (1.0 - rate if rate < 0.5 else rate)


def verdicts(runs: dict[str, tuple[np.ndarray, int]], rng: np.random.Generator) -> pl.DataFrame:
    """A verdict frame: per run, case pass rates and repeats; each repeat passes with its case's rate."""
    frames = []
    for run, (p, k) in runs.items():
        n = len(p)
        passed = rng.random((n, k)) < p[:, None]
        frames.append(
            pl.DataFrame(
                {
                    "run_id": [run] * (n * k),
                    "case_id": np.repeat(np.arange(n), k).astype(str),
                    "slice": ["all"] * (n * k),
                    "repeat": np.tile(np.arange(k), n),
                    "status": np.where(passed.ravel(), "pass", "fail"),
                }
            )
        )
    return pl.concat(frames)


def _setting(n: int, k: Any, rate: float, phi: float, extra: str = "") -> str:
    return f"{n} cases x {k} repeats, rate {rate:.0%}, phi {phi:g}{extra}"


def pass_rate_coverage(
    n: int, k: int, rate: float, phi: float, sims: int, rng: np.random.Generator
) -> dict[str, Any]:
    """Coverage of the pass rate's interval: Wilson's with one repeat, the clustered one with repeats."""
    rate_of = pass_rate if k == 1 else clustered_pass_rate
    hits = 0
    for _ in range(sims):
        r = rate_of(verdicts({"A": (_beta(rng, n, rate, phi), k)}, rng)).row(0, named=True)
        hits += r["ci_low"] <= rate <= r["ci_high"]
    name = "pass rate, Wilson (one repeat)" if k == 1 else "pass rate, clustered by case (repeats)"
    return {
        "statistic": name,
        "setting": _setting(n, k, rate, phi),
        "nominal": NOMINAL,
        "coverage": hits / sims,
        "sims": sims,
    }


def paired_change_coverage(
    n: int, k_a: int, k_b: int, rate: float, phi: float, change: float, sims: int, rng: np.random.Generator
) -> dict[str, Any]:
    """Coverage of the interval ``compare_runs`` gives the paired change B - A (the population change)."""
    beta = logit_shift(rate, phi, change)
    hits = 0
    for _ in range(sims):
        p = _beta(rng, n, rate, phi)
        c = compare_runs(verdicts({"A": (p, k_a), "B": (_moved(p, beta), k_b)}, rng), "A", "B")
        hits += c.ci_low <= change <= c.ci_high
    k = k_a if k_a == k_b else f"{k_a} vs {k_b}"
    return {
        "statistic": "paired change, repeats",
        "setting": _setting(n, k, rate, phi, f", change {change:+.0%}"),
        "nominal": NOMINAL,
        "coverage": hits / sims,
        "sims": sims,
    }


def _significant_share(
    n: int, k: int, rate: float, phi: float, change: float, sims: int, rng: np.random.Generator
) -> float:
    beta = logit_shift(rate, phi, change)
    hits = 0
    for _ in range(sims):
        p = _beta(rng, n, rate, phi)
        hits += compare_runs(verdicts({"A": (p, k), "B": (_moved(p, beta), k)}, rng), "A", "B").significant
    return hits / sims


def reported_mde(frame: pl.DataFrame) -> float:
    """The MDE ``evalkit report`` prints for a comparison: the paired one, or the single-run one when the paired
    one is 0 or undefined."""
    paired = estimate_mde(frame, "A", "B").mde
    if math.isnan(paired) or paired == 0.0:
        return estimate_mde(frame, "A").mde
    return paired


def _power_row(
    name: str, n: int, k: int, rate: float, phi: float, mde: float, power: float | None, sims: int
) -> dict[str, Any]:
    return {
        "statistic": name,
        "setting": _setting(n, k, rate, phi),
        "nominal": POWER,
        "power": power,
        "sims": sims,
        "mde": mde,
    }


def power_at_single_run_mde(
    n: int, k: int, rate: float, phi: float, sims: int, rng: np.random.Generator
) -> dict[str, Any]:
    """Power of the significance flag at the median MDE ``estimate_mde`` reports for one run of the design."""
    mdes = [estimate_mde(verdicts({"A": (_beta(rng, n, rate, phi), k)}, rng), "A").mde for _ in range(sims)]
    mde = statistics.median(mdes)
    name = "power at the single-run MDE" + (", one repeat" if k == 1 else ", repeats")
    if not mde < _room(rate):
        return _power_row(name, n, k, rate, phi, mde, None, sims)
    return _power_row(
        name,
        n,
        k,
        rate,
        phi,
        mde,
        _significant_share(n, k, rate, phi, _towards_half(rate) * mde, sims, rng),
        sims,
    )


def power_at_paired_mde(
    n: int, k: int, rate: float, phi: float, sims: int, rng: np.random.Generator
) -> dict[str, Any]:
    """Power of the significance flag at the fixed point of the median MDE reported from a comparison."""
    name = "power at the reported paired MDE" + (", one repeat" if k == 1 else ", repeats")
    sign = _towards_half(rate)
    mde = 0.0
    for _ in range(_ROUNDS + 1):
        beta = logit_shift(rate, phi, sign * mde)
        found = []
        for _ in range(max(sims // 4, 25)):
            p = _beta(rng, n, rate, phi)
            found.append(reported_mde(verdicts({"A": (p, k), "B": (_moved(p, beta), k)}, rng)))
        mde = statistics.median(found)
        if not mde < _room(rate):
            return _power_row(name, n, k, rate, phi, mde, None, sims)
    return _power_row(
        name, n, k, rate, phi, mde, _significant_share(n, k, rate, phi, sign * mde, sims, rng), sims
    )


def settings(family: str = "all") -> Iterable[tuple[Callable[..., dict[str, Any]], tuple[Any, ...]]]:
    """The full grid ("coverage", "power" or "all"): each statistic at every size, repeats, rate and spread."""
    if family in ("all", "coverage"):
        for n in SIZES:
            for k in REPEATS:
                for rate in RATES:
                    for phi in PHIS:
                        yield pass_rate_coverage, (n, k, rate, phi)
        for n in SIZES:
            for k_a, k_b in ((3, 3), (5, 5), (1, 5)):
                for rate in (0.1, 0.5, 0.9):
                    for phi in PHIS:
                        for change in (0.0, _towards_half(rate) * CHANGE):
                            yield paired_change_coverage, (n, k_a, k_b, rate, phi, change)
    if family in ("all", "power"):
        for fn in (power_at_single_run_mde, power_at_paired_mde):
            for n in SIZES:
                for k in REPEATS:
                    for rate in (0.1, 0.5, 0.9):
                        for phi in PHIS:
                            yield fn, (n, k, rate, phi)


def table(sims: int, seed: int) -> list[dict[str, Any]]:
    """Every row of the full grid, ``sims`` simulated data sets each, seeded."""
    rng = np.random.default_rng(seed)
    return [fn(*args, sims, rng) for fn, args in settings()]


def format_table(rows: list[dict[str, Any]]) -> str:
    out = []
    for r in rows:
        value = r.get("coverage", r.get("power"))
        shown = "n/a (no change of that size fits)" if value is None else f"{value:.3f}"
        mde = f"  at MDE {100 * r['mde']:.1f} pts" if "mde" in r and r["mde"] is not None else ""
        what = "coverage" if "coverage" in r else "power"
        out.append(f"{r['statistic']:<44} {r['setting']:<52} {what} {shown} (nominal {r['nominal']:g}){mde}")
    return "\n".join(out)


if __name__ == "__main__":
    sims = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 23
    family = sys.argv[3] if len(sys.argv) > 3 else "all"
    rng = np.random.default_rng(seed)
    for fn, args in settings(family):
        start = time.perf_counter()
        row = fn(*args, sims, rng)
        print(format_table([row]), f"[{time.perf_counter() - start:.0f} s]", flush=True)
