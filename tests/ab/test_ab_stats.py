"""The A/B numbers against references: the sign test against scipy's binomtest, the interval against
statsmodels' Wilson interval; and the interval's coverage by a seeded simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from evalkit._ab import tally


@pytest.mark.parametrize(
    ("wins_b", "wins_a", "ties"), [(9, 1, 3), (0, 0, 4), (12, 12, 0), (3, 17, 5), (40, 25, 9)]
)
def test_tally_matches_scipy_and_statsmodels(wins_b: int, wins_a: int, ties: int) -> None:
    t = tally(["B"] * wins_b + ["A"] * wins_a + ["tie"] * ties)
    assert (t["n"], t["wins_b"], t["wins_a"], t["ties"]) == (wins_b + wins_a + ties, wins_b, wins_a, ties)
    if wins_a + wins_b == 0:
        assert t["win_rate_b"] is None and t["win_rate_b_ci"] is None and t["p_value"] == 1.0
        return
    assert t["p_value"] == pytest.approx(binomtest(wins_b, wins_a + wins_b, 0.5).pvalue, rel=1e-9)
    low, high = proportion_confint(wins_b, wins_a + wins_b, alpha=0.05, method="wilson")
    assert t["win_rate_b_ci"] == pytest.approx([low, high], abs=1e-9)


@pytest.mark.parametrize("n", [10, 30])
def test_the_win_rate_interval_covers_about_95_percent(n: int) -> None:
    # n cases, a quarter ties on average; B beats A on a decisive case with probability p
    rng = np.random.default_rng(20261203 + n)
    covered = trials = 0
    for p in (0.5, 0.65, 0.8):
        for _ in range(1500):
            ties = rng.random(n) < 0.25
            b_wins = rng.random(n) < p
            verdicts = ["tie" if t else ("B" if w else "A") for t, w in zip(ties, b_wins, strict=True)]
            ci = tally(verdicts)["win_rate_b_ci"]
            if ci is None:
                continue
            trials += 1
            covered += ci[0] <= p <= ci[1]
    assert 0.92 <= covered / trials <= 0.985


def test_bradley_terry_is_the_maximum_likelihood_fit() -> None:
    from scipy.optimize import minimize

    from evalkit._ab import fit
    from evalkit._ab._bt import PRIOR

    rng = np.random.default_rng(7)
    wins = rng.integers(0, 12, size=(4, 4)) * (1 - np.eye(4, dtype=int))
    w = wins + PRIOR * (1 - np.eye(4))

    def nll(theta: np.ndarray) -> float:
        diff = theta[:, None] - theta[None, :]
        return float(np.sum(w * np.logaddexp(0, -diff)))

    reference = minimize(nll, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    assert fit(wins) == pytest.approx(reference - reference.mean(), abs=1e-5)
    # a run that never won stays finite, below the rest
    never = np.array([[0, 0, 0], [5, 0, 2], [4, 3, 0]])
    got = fit(never)
    assert np.isfinite(got).all() and got[0] == got.min()
