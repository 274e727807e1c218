"""Coverage of the per-slice intervals evalkit prints: a slice's pass rate, and its change against a baseline.

Seeded simulations at the slice sizes users have. Each row is one setting: the share of simulated slices whose
printed 95% interval holds the true value.

* **Pass rate, one repeat**: n cases, each passing with probability p; the interval is ``pass_rate(..., by=
  "slice")``'s Wilson interval, the one the summary and the HTML report print per slice.
* **Pass rate, 3 repeats**: each case has its own pass probability, drawn from Beta(2p, 2(1 - p)) (cases
  differ a lot, as they do), and is run 3 times; the interval is ``clustered_pass_rate(..., by="slice")``'s
  (Wilson at the clustered effective size). The true value is p, the mean over cases.
* **Change against a baseline, one repeat**: n cases run by the baseline (pass rate pA) and by this run
  (pass rate pB), correlated as two runs of one suite are: for half the cases (at random) both runs read one
  uniform draw u (a pass when u < pA, u < pB), for the other half each run draws its own. The true change is
  pB - pA. The interval is the one ``slice_deltas`` gives (each slice's ``compare_runs``: Newcombe's method 10
  on the paired table), called on every distinct table the simulation produced. "before" applies the bound
  ``slice_deltas`` used to put on it, [-rate_a, 1 - rate_a] at the observed baseline rate, to the same
  intervals.
* **Change against a baseline, 3 repeats**: case pass probabilities drawn as for the pass rate, Beta(2pA,
  2(1 - pA)) for the baseline; for half the cases this run's is the same quantile of Beta(2pB, 2(1 - pB)), for
  the other half its own draw; each run 3 times. The interval is ``slice_deltas``' on every simulated slice
  (``compare_runs`` on case means: Newcombe's construction below 10 cases, Student's t from 10), so this grid
  is smaller (``repeat_sizes``, four pairs of rates).
* **Dev against holdout** (a split is a slice of its own kind): a suite's dev and holdout cases pass with
  probabilities pD and pH, independently; the interval is ``dev_vs_holdout``'s for pD - pH (Newcombe's hybrid
  score interval for independent rates), the one the HTML report prints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from scipy.stats import beta

from evalkit._baseline import slice_deltas
from evalkit.stats import clustered_pass_rate, dev_vs_holdout, pass_rate

NOMINAL = 0.95
SIZES = (5, 8, 10, 20, 50)
RATES = (0.1, 0.3, 0.5, 0.7, 0.9)
SHARED = 0.5
"""The share of cases whose two runs read one draw (the rest draw independently)."""
REPEATS = 3
REPEAT_SIZES = (8, 20)
REPEAT_PAIRS = ((0.5, 0.5), (0.9, 0.9), (0.3, 0.5), (0.5, 0.1))
SPLIT_SIZES = ((40, 10), (160, 40))
"""(dev, holdout) cases: a suite of 50 and of 200 with a fifth held out."""
SPLIT_PAIRS = ((0.5, 0.5), (0.9, 0.9), (0.9, 0.7), (0.7, 0.9))
_EPS = 1e-12  # an interval's closed ends, against the float dust of p_b - p_a

RATE = "slice pass rate, 1 repeat (Wilson)"
RATE_REPEATS = f"slice pass rate, {REPEATS} repeats (clustered Wilson)"
CHANGE = "slice change, 1 repeat (Newcombe paired)"
CHANGE_BEFORE = "slice change, clipped at the observed baseline rate (before)"
CHANGE_REPEATS = f"slice change, {REPEATS} repeats (compare_runs on case means)"
CHANGE_REPEATS_BEFORE = f"slice change, {REPEATS} repeats, clipped at the observed baseline rate (before)"
SPLITS = "dev - holdout (Newcombe hybrid score)"


def _rng(seed: int, *key: int) -> np.random.Generator:
    # one stream per setting, so a setting's figure does not depend on which others ran
    return np.random.default_rng([seed, *key])


def _row(statistic: str, setting: str, hits: np.ndarray, sims: int) -> dict[str, Any]:
    return {
        "statistic": statistic,
        "setting": setting,
        "nominal": NOMINAL,
        "coverage": float(np.mean(hits)),
        "sims": sims,
    }


def _covers(low: np.ndarray, high: np.ndarray, truth: float) -> np.ndarray:
    return (low - _EPS <= truth) & (truth <= high + _EPS)


def _status(passed: np.ndarray) -> np.ndarray:
    return np.where(passed, "pass", "fail")


def rate_rows(sims: int, seed: int, sizes: Sequence[int], rates: Sequence[float]) -> list[dict[str, Any]]:
    """The per-slice pass-rate interval, one repeat and three, every simulated slice one slice of a frame."""
    rows = []
    for n in sizes:
        for p in rates:
            key = (n, round(100 * p))
            passed = _rng(seed, 1, *key).random((sims, n)) < p
            slices = np.repeat(np.arange(sims), n)
            frame = pl.DataFrame({"slice": slices, "status": _status(passed.ravel())})
            r = pass_rate(frame, by="slice")
            hits = _covers(r["ci_low"].to_numpy(), r["ci_high"].to_numpy(), p)
            rows.append(_row(RATE, f"{n} cases, rate {p:g}", hits, sims))

            rng = _rng(seed, 2, *key)
            theta = rng.beta(2 * p, 2 * (1 - p), size=(sims, n))
            passed = rng.random((sims, n, REPEATS)) < theta[..., None]
            frame = pl.DataFrame(
                {
                    "slice": np.repeat(np.arange(sims), n * REPEATS),
                    "case_id": np.repeat(np.arange(sims * n), REPEATS),
                    "status": _status(passed.ravel()),
                }
            )
            r = clustered_pass_rate(frame, by="slice")
            hits = _covers(r["ci_low"].to_numpy(), r["ci_high"].to_numpy(), p)
            rows.append(_row(RATE_REPEATS, f"{n} cases x {REPEATS}, rate {p:g}", hits, sims))
    return rows


def _tables(sims: int, n: int, p_a: float, p_b: float, rng: np.random.Generator) -> np.ndarray:
    """(sims, 4) paired tables: both pass, only A, only B, both fail."""
    u = rng.random((sims, n))
    shared = rng.random((sims, n)) < SHARED
    a = u < p_a
    b = np.where(shared, u < p_b, rng.random((sims, n)) < p_b)
    cells = [a & b, a & ~b, ~a & b, ~a & ~b]
    return np.stack([c.sum(axis=1) for c in cells], axis=1)


def _intervals(tables: np.ndarray) -> dict[tuple[int, ...], tuple[float, float]]:
    """``slice_deltas``' interval for each distinct table, each table one slice of one frame."""
    distinct = np.unique(tables, axis=0)
    run_a, run_b, case, slice_ = [], [], [], []
    for t, (both, only_a, only_b, neither) in enumerate(distinct):
        a = [True] * both + [True] * only_a + [False] * only_b + [False] * neither
        b = [True] * both + [False] * only_a + [True] * only_b + [False] * neither
        run_a += a
        run_b += b
        case += [f"t{t}c{i}" for i in range(len(a))]
        slice_ += [f"t{t:06d}"] * len(a)
    k = len(case)
    frame = pl.DataFrame(
        {
            "run_id": ["A"] * k + ["B"] * k,
            "case_id": case * 2,
            "repeat": [0] * (2 * k),
            "slice": slice_ * 2,
            "split": ["dev"] * (2 * k),
            "status": list(_status(np.array(run_a + run_b, dtype=bool))),
        }
    )
    deltas = slice_deltas(frame, "A", "B").sort("slice")
    lows, highs = deltas["ci_low"].to_list(), deltas["ci_high"].to_list()
    return {tuple(int(x) for x in t): (lows[i], highs[i]) for i, t in enumerate(distinct)}


def _pairs(rates: Sequence[float]) -> list[tuple[float, float]]:
    """(baseline rate, this run's rate): no change at each rate, and every rate to the low, middle and high one."""
    ends = [min(rates), rates[len(rates) // 2], max(rates)]
    return [(a, b) for a in rates for b in dict.fromkeys([a, *ends])]


def change_rows(sims: int, seed: int, sizes: Sequence[int], rates: Sequence[float]) -> list[dict[str, Any]]:
    """The per-slice change interval, as ``slice_deltas`` prints it and as it printed it clipped."""
    rows = []
    for n in sizes:
        drawn = {
            (a, b): _tables(sims, n, a, b, _rng(seed, 3, n, round(100 * a), round(100 * b)))
            for a, b in _pairs(rates)
        }
        known = _intervals(np.concatenate(list(drawn.values())))
        for (a, b), tables in drawn.items():
            low, high = np.array([known[tuple(int(x) for x in t)] for t in tables]).T
            rate_a = (tables[:, 0] + tables[:, 1]) / n
            truth = b - a
            setting = f"{n} cases, {a:g} -> {b:g}"
            rows.append(_row(CHANGE, setting, _covers(low, high, truth), sims))
            before = _covers(np.maximum(low, -rate_a), np.minimum(high, 1.0 - rate_a), truth)
            rows.append(_row(CHANGE_BEFORE, setting, before, sims))
    return rows


def _case_rates(p: float, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    return rng.beta(2 * p, 2 * (1 - p), size=size)


def change_repeat_rows(
    sims: int, seed: int, sizes: Sequence[int], pairs: Sequence[tuple[float, float]]
) -> list[dict[str, Any]]:
    """The per-slice change interval with repeats, ``slice_deltas`` on every simulated slice."""
    rows = []
    for n in sizes:
        for a, b in pairs:
            rng = _rng(seed, 4, n, round(100 * a), round(100 * b))
            theta_a = _case_rates(a, (sims, n), rng)
            same_rank = beta.ppf(beta.cdf(theta_a, 2 * a, 2 * (1 - a)), 2 * b, 2 * (1 - b))
            theta_b = np.where(rng.random((sims, n)) < SHARED, same_rank, _case_rates(b, (sims, n), rng))
            runs = []
            for run, theta in (("A", theta_a), ("B", theta_b)):
                passed = rng.random((sims, n, REPEATS)) < theta[..., None]
                runs.append(
                    pl.DataFrame(
                        {
                            "run_id": [run] * passed.size,
                            "case_id": np.repeat(np.arange(sims * n), REPEATS).astype(str),
                            "repeat": np.tile(np.arange(REPEATS), sims * n),
                            "slice": np.repeat(np.arange(sims), n * REPEATS).astype(str),
                            "split": ["dev"] * passed.size,
                            "status": _status(passed.ravel()),
                        }
                    )
                )
            d = slice_deltas(pl.concat(runs), "A", "B")
            low, high, rate_a = (d[c].to_numpy() for c in ("ci_low", "ci_high", "rate_a"))
            setting = f"{n} cases x {REPEATS}, {a:g} -> {b:g}"
            rows.append(_row(CHANGE_REPEATS, setting, _covers(low, high, b - a), sims))
            before = _covers(np.maximum(low, -rate_a), np.minimum(high, 1.0 - rate_a), b - a)
            rows.append(_row(CHANGE_REPEATS_BEFORE, setting, before, sims))
    return rows


def split_rows(
    sims: int, seed: int, sizes: Sequence[tuple[int, int]], pairs: Sequence[tuple[float, float]]
) -> list[dict[str, Any]]:
    """The dev - holdout interval, every simulated suite one group of one frame."""
    rows = []
    for n_dev, n_holdout in sizes:
        for p_dev, p_holdout in pairs:
            rng = _rng(seed, 5, n_dev, n_holdout, round(100 * p_dev), round(100 * p_holdout))
            n = n_dev + n_holdout
            p = np.where(np.arange(n) < n_dev, p_dev, p_holdout)
            passed = rng.random((sims, n)) < p
            frame = pl.DataFrame(
                {
                    "suite": np.repeat(np.arange(sims), n),
                    "case_id": np.arange(sims * n).astype(str),
                    "split": np.tile(np.where(np.arange(n) < n_dev, "dev", "holdout"), sims),
                    "status": _status(passed.ravel()),
                }
            )
            r = dev_vs_holdout(frame, by="suite")
            hits = _covers(r["diff_ci_low"].to_numpy(), r["diff_ci_high"].to_numpy(), p_dev - p_holdout)
            setting = f"{n_dev} dev, {n_holdout} holdout, {p_dev:g} vs {p_holdout:g}"
            rows.append(_row(SPLITS, setting, hits, sims))
    return rows


def table(
    sims: int,
    seed: int,
    *,
    sizes: Sequence[int] = SIZES,
    rates: Sequence[float] = RATES,
    repeat_sizes: Sequence[int] = REPEAT_SIZES,
    repeat_pairs: Sequence[tuple[float, float]] = REPEAT_PAIRS,
    split_sizes: Sequence[tuple[int, int]] = SPLIT_SIZES,
    split_pairs: Sequence[tuple[float, float]] = SPLIT_PAIRS,
) -> list[dict[str, Any]]:
    """Coverage of the per-slice pass-rate and change intervals (rows as ``bench/coverage/__init__.py`` says).

    Parameters
    ----------
    sims:
        Simulated slices per setting.
    seed:
        Seed; each setting draws from its own stream of it.
    sizes, rates:
        Slice sizes (cases) and true pass rates; the change runs from each rate to itself and to the lowest,
        middle and highest.
    repeat_sizes, repeat_pairs:
        Slice sizes and (baseline, run) rates of the change with repeats, whose intervals are computed one
        simulated slice at a time (about 4 ms each).
    split_sizes, split_pairs:
        (dev, holdout) cases and (dev, holdout) rates of the dev - holdout difference.
    """
    return (
        rate_rows(sims, seed, sizes, rates)
        + change_rows(sims, seed, sizes, rates)
        + change_repeat_rows(sims, seed, repeat_sizes, repeat_pairs)
        + split_rows(sims, seed, split_sizes, split_pairs)
    )


def binomial_error(sims: int, nominal: float = NOMINAL) -> float:
    """The Monte Carlo standard error of a coverage estimate from `sims` simulations at the nominal level."""
    return math.sqrt(nominal * (1.0 - nominal) / sims)
