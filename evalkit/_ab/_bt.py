"""Three or more runs: a Bradley-Terry ranking from their pairwise A/B verdicts, with bootstrap intervals.

Each pair of runs is compared case by case (`ab`); a case's verdict is a win for one run or a tie. The model
P(i beats j) = s_i / (s_i + s_j) is fitted by maximum likelihood (Newton's method) on the wins (ties left out, as in the win rate),
with one half of a win added each way on every pair of runs (a prior that keeps a run that never won, or never
lost, at a finite strength). Strengths are reported as log-strengths centred on 0. The interval is the
percentile interval of a bootstrap that resamples cases (every pair's verdict on a case goes together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

PRIOR = 0.5
"""Pseudo-wins added each way on every pair of runs."""


def fit(wins: np.ndarray, *, prior: float = PRIOR, tol: float = 1e-10, max_iter: int = 100) -> np.ndarray:
    """Log-strengths (centred on 0) from a win matrix, ``wins[i, j]`` = times i beat j: Newton's method on the
    log-likelihood, which is concave (the prior makes every pair of runs compared, so the maximum is unique).

    >>> [round(float(x), 3) for x in fit(np.array([[0, 3], [1, 0]]))]
    [0.424, -0.424]
    """
    k = wins.shape[0]
    w = wins.astype(float) + prior * (1 - np.eye(k))
    games = w + w.T
    theta = np.zeros(k)
    centre = np.ones((k, k)) / k  # the likelihood is flat along theta + c: pin the sum at 0
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
        grad = (w - games * p).sum(axis=1)
        curvature = games * p * p.T
        laplacian = np.diag(curvature.sum(axis=1)) - curvature
        step = np.linalg.solve(laplacian + centre, grad)
        theta += step
        if np.max(np.abs(step)) < tol:
            break
    return theta - theta.mean()


@dataclass(frozen=True)
class Ranking:
    """The runs from strongest to weakest: log-strength, its interval, and wins and losses over all pairs."""

    rows: list[dict[str, Any]]
    method: str
    confidence: float

    def text(self) -> str:
        width = max(len(r["run"]) for r in self.rows)
        pct = f"{self.confidence:.0%}"
        lines = [f"Bradley-Terry ranking of {len(self.rows)} runs (log-strength, {pct} bootstrap interval):"]
        for r in self.rows:
            lines.append(
                f"  {r['rank']}. {r['run']:<{width}}  {r['strength']:+.2f}  [{r['ci'][0]:+.2f}, {r['ci'][1]:+.2f}]"
                f"  wins {r['wins']}, losses {r['losses']}"
            )
        lines.append(f"  method: {self.method}")
        return "\n".join(lines)


def rank(
    names: list[str],
    verdicts: dict[tuple[int, int], dict[str, str | None]],
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> Ranking:
    """Rank runs from their pairwise verdicts: ``verdicts[(i, j)]`` maps a case id to "A" (run i won), "B"
    (run j won), "tie" or None."""
    k = len(names)
    cases = sorted({c for v in verdicts.values() for c in v})
    index = {c: n for n, c in enumerate(cases)}
    pairs = list(verdicts)
    # per pair and case: +1 when the pair's B (run j) won, -1 when A (run i) won, else 0
    sign = np.zeros((len(pairs), len(cases)), dtype=np.int8)
    for p, key in enumerate(pairs):
        for case, v in verdicts[key].items():
            sign[p, index[case]] = 1 if v == "B" else -1 if v == "A" else 0

    def matrix(weights: np.ndarray) -> np.ndarray:
        wins = np.zeros((k, k))
        for p, (i, j) in enumerate(pairs):
            wins[j, i] += weights @ (sign[p] == 1)
            wins[i, j] += weights @ (sign[p] == -1)
        return wins

    observed = matrix(np.ones(len(cases)))
    strength = fit(observed)
    rng = np.random.default_rng(seed)
    draws = np.empty((resamples, k))
    for b in range(resamples):
        weights = np.bincount(rng.integers(0, len(cases), len(cases)), minlength=len(cases)).astype(float)
        draws[b] = fit(matrix(weights))
    alpha = 1 - confidence
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
    order = np.argsort(-strength, kind="stable")
    rows = [
        {
            "rank": r + 1,
            "run": names[i],
            "strength": float(strength[i]),
            "ci": [float(low[i]), float(high[i])],
            "wins": int(observed[i].sum()),
            "losses": int(observed[:, i].sum()),
        }
        for r, i in enumerate(order)
    ]
    method = (
        f"Bradley-Terry maximum likelihood on case wins (ties left out, {PRIOR:g} pseudo-win each way per pair); "
        f"log-strengths centred on 0; percentile interval from {resamples} bootstrap resamples of the cases"
    )
    return Ranking(rows, method, confidence)
