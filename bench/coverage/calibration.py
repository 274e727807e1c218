"""Coverage of the calibration intervals evalkit prints: the corrected pass rate (PPI++) and kappa.

Seeded simulations at the label counts a calibration has. Each row is one setting: the share of simulated
calibrations whose printed 95% interval holds the true value.

* **Corrected pass rate (PPI++)**: N unlabelled and n labelled cases, each truly passing with probability p;
  the judge says pass with probability TPR on a passing case and 1 - TNR on a failing one. The labelled cases
  are a random sample of the same population. The true value is p. "before" is the normal interval the
  reference implementation (ppi-python) gives and evalkit printed (standard deviations over n, tuned lambda,
  cut to [0, 1]); "interval" is ``ppi_pass_rate``'s small-sample interval at every n (``min_labels=0``); "shown"
  is what evalkit prints: that interval from ``PPI_MIN_LABELS`` labels on, the human-only Wilson interval below.
* **Cohen's kappa**: n items, a binary human label passing with probability p and a judge of the given
  TPR/TNR; the true kappa is the population one of that joint distribution. The interval is the percentile
  bootstrap ``agreement`` prints (``pair_kappa``, 1,000 resamples), counted over the calibrations where kappa
  is defined (both raters gave both labels). Below ``KAPPA_MIN_ITEMS`` items it is printed with a flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.calibration import ppi_pass_rate
from evalkit.calibration._agreement import pair_kappa
from evalkit.calibration._pairwise import cohen_kappa
from evalkit.stats import z_critical

NOMINAL = 0.95
LABELS = (5, 8, 10, 15, 20, 30, 50)
RATES = (0.1, 0.3, 0.5)
JUDGES = ((0.9, 0.8), (0.95, 0.95))
"""(TPR, TNR) of the simulated judge."""
UNLABELLED = (50, 500)
_EPS = 1e-12

PPI_BEFORE = "PPI++ normal interval (before)"
PPI_INTERVAL = "PPI++ small-sample interval, every n"
PPI_SHOWN = "corrected pass rate as printed"
KAPPA = "Cohen's kappa, percentile bootstrap"
KAPPA_ITEMS = (10, 20, 30, 50, 100)
KAPPA_SETTINGS = ((0.5, 0.9, 0.8), (0.3, 0.9, 0.8), (0.1, 0.9, 0.8), (0.5, 0.95, 0.95), (0.3, 0.8, 0.7))
"""(human pass rate, judge TPR, judge TNR)."""


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng([seed, *key])


def _row(statistic: str, setting: str, hits: Sequence[bool] | np.ndarray, sims: int) -> dict[str, Any]:
    return {
        "statistic": statistic,
        "setting": setting,
        "nominal": NOMINAL,
        "coverage": float(np.mean(hits)),
        "sims": sims,
    }


def normal_ppi_interval(y: np.ndarray, yhat: np.ndarray, unl: np.ndarray) -> tuple[float, float]:
    """The reference implementation's PPI++ interval (what evalkit printed before): normal, sd over n."""
    n, big_n = y.size, unl.size
    est = ppi_pass_rate(np.concatenate([yhat, unl]), yhat, y, min_labels=0)
    lam = est.lam
    rate = float(lam * unl.mean() + (y - lam * yhat).mean())
    se = float(np.sqrt(np.std(lam * unl) ** 2 / big_n + np.std(y - lam * yhat) ** 2 / n))
    z = z_critical(NOMINAL)
    return max(rate - z * se, 0.0), min(rate + z * se, 1.0)


def _draw(
    rng: np.random.Generator, n: int, big_n: int, p: float, tpr: float, tnr: float
) -> tuple[np.ndarray, np.ndarray]:
    truth = rng.random(n + big_n) < p
    judge = np.where(truth, rng.random(n + big_n) < tpr, rng.random(n + big_n) >= tnr)
    return truth.astype(np.float64), judge.astype(np.float64)


def ppi_coverage(
    n: int, p: float, tpr: float, tnr: float, big_n: int, sims: int, seed: int = 0
) -> dict[str, float]:
    """The share of `sims` calibrations whose interval holds p: before, the interval at every n, and as shown."""
    rng = _rng(seed, 1, n, round(100 * p), round(100 * tpr), round(100 * tnr), big_n)
    hits = {"before": 0, "interval": 0, "shown": 0, "zero_width_before": 0, "zero_width": 0}
    for _ in range(sims):
        truth, judge = _draw(rng, n, big_n, p, tpr, tnr)
        y, yhat, unl = truth[:n], judge[:n], judge[n:]
        low, high = normal_ppi_interval(y, yhat, unl)
        hits["before"] += low - _EPS <= p <= high + _EPS
        hits["zero_width_before"] += high - low < _EPS
        raw = ppi_pass_rate(judge, yhat, y, min_labels=0)
        hits["interval"] += raw.ci_low - _EPS <= p <= raw.ci_high + _EPS
        hits["zero_width"] += raw.ci_high - raw.ci_low < _EPS
        shown = ppi_pass_rate(judge, yhat, y)
        hits["shown"] += shown.ci_low - _EPS <= p <= shown.ci_high + _EPS
    return {k: v / sims for k, v in hits.items()}


def ppi_rows(
    sims: int, seed: int, labels: Sequence[int] = LABELS, rates: Sequence[float] = RATES
) -> list[dict[str, Any]]:
    """Every (judge, rate, unlabelled, labels) setting of the corrected pass rate, before and after."""
    rows = []
    for tpr, tnr in JUDGES:
        for p in rates:
            for big_n in UNLABELLED:
                for n in labels:
                    c = ppi_coverage(n, p, tpr, tnr, big_n, sims, seed)
                    setting = f"{n} labels, N {big_n}, p {p:g}, TPR/TNR {tpr:g}/{tnr:g}"
                    rows.append(_row(PPI_BEFORE, setting, [c["before"]], sims))
                    rows.append(_row(PPI_INTERVAL, setting, [c["interval"]], sims))
                    rows.append(_row(PPI_SHOWN, setting, [c["shown"]], sims))
    return rows


def true_kappa(p: float, tpr: float, tnr: float) -> float:
    """The population kappa of a human label passing with probability p against a judge of this TPR/TNR."""
    cells = np.array([[(1 - p) * tnr, (1 - p) * (1 - tnr)], [p * (1 - tpr), p * tpr]])
    return float(cohen_kappa(cells))


def kappa_coverage(
    n: int, p: float, tpr: float, tnr: float, sims: int, seed: int = 0, n_boot: int = 1000
) -> tuple[float, int]:
    """The share of calibrations with a defined kappa whose interval holds the true kappa, and their number."""
    rng = _rng(seed, 2, n, round(100 * p), round(100 * tpr), round(100 * tnr))
    truth = true_kappa(p, tpr, tnr)
    hits, shown = 0, 0
    for s in range(sims):
        human = rng.random(n) < p
        judge = np.where(human, rng.random(n) < tpr, rng.random(n) >= tnr)
        _, ci, _ = pair_kappa(
            human.astype(np.int64), judge.astype(np.int64), 2, confidence=NOMINAL, n_boot=n_boot, seed=s
        )
        if ci is None:
            continue
        shown += 1
        hits += ci.low - _EPS <= truth <= ci.high + _EPS
    return hits / max(shown, 1), shown


def kappa_rows(sims: int, seed: int, items: Sequence[int] = KAPPA_ITEMS) -> list[dict[str, Any]]:
    """Every (items, rate, judge) setting of the kappa interval."""
    rows = []
    for n in items:
        for p, tpr, tnr in KAPPA_SETTINGS:
            cover, shown = kappa_coverage(n, p, tpr, tnr, sims, seed)
            setting = f"{n} items, p {p:g}, TPR/TNR {tpr:g}/{tnr:g} (kappa {true_kappa(p, tpr, tnr):.2f})"
            rows.append({**_row(KAPPA, setting, [cover], shown), "sims": max(shown, 1)})
    return rows


def table(sims: int, seed: int = 0) -> list[dict[str, Any]]:
    """The full grid, for bench/bench_coverage.py."""
    return ppi_rows(sims, seed) + kappa_rows(sims, seed)


def ppi_summary(sims: int, seed: int = 0) -> None:
    """The worst coverage over the settings at each label count, before / interval / shown."""
    for n in LABELS:
        worst: dict[str, float] = {"before": 1.0, "interval": 1.0, "shown": 1.0}
        zero = 0.0
        for tpr, tnr in JUDGES:
            for p in RATES:
                for big_n in UNLABELLED:
                    c = ppi_coverage(n, p, tpr, tnr, big_n, sims, seed)
                    zero = max(zero, c["zero_width_before"])
                    for k in worst:
                        worst[k] = min(worst[k], c[k])
        print(
            f"{n:3d} labels: worst coverage before {100 * worst['before']:.1f}%, interval "
            f"{100 * worst['interval']:.1f}%, shown {100 * worst['shown']:.1f}%; zero width before up to "
            f"{100 * zero:.0f}%",
            flush=True,
        )


def kappa_summary(sims: int, seed: int = 0) -> None:
    """The coverage of the kappa interval at each item count, worst and best over the settings."""
    for n in KAPPA_ITEMS:
        covers = [kappa_coverage(n, p, tpr, tnr, sims, seed)[0] for p, tpr, tnr in KAPPA_SETTINGS]
        print(
            f"{n:3d} items: kappa coverage {100 * min(covers):.1f}% to {100 * max(covers):.1f}%", flush=True
        )


if __name__ == "__main__":
    import sys

    what = sys.argv[2] if len(sys.argv) > 2 else "ppi"
    (kappa_summary if what == "kappa" else ppi_summary)(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
