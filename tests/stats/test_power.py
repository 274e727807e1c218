"""Minimum detectable effect and cases needed, against statsmodels power."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from stats_testdata import (
    EXACT,
    case_means,
    paired_verdicts,
    verdicts_from,
)
from statsmodels.stats.power import NormalIndPower, zt_ind_solve_power

import evalkit.stats as stats
from evalkit.errors import EvalkitError


def test_mde_hand_computation() -> None:
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    got = stats.minimum_detectable_effect(200, 0.05, s2_a=0.2, s2_b=0.15, k_a=3, k_b=5)
    assert got == pytest.approx(z * math.sqrt((0.05 + 0.2 / 3 + 0.15 / 5) / 200), abs=EXACT)
    z90 = sps.norm.ppf(0.995) + sps.norm.ppf(0.9)
    got = stats.minimum_detectable_effect(50, 0.1, alpha=0.01, power=0.9)
    assert got == pytest.approx(z90 * math.sqrt(0.1 / 50), abs=EXACT)
    assert stats.minimum_detectable_effect(0, 0.1) == math.inf


def test_mde_matches_statsmodels_power() -> None:
    n, omega2, s2, k = 300, 0.04, 0.18, 4
    sd = math.sqrt(omega2 + 2 * s2 / k)
    mde = stats.minimum_detectable_effect(n, omega2, s2_a=s2, s2_b=s2, k_a=k, k_b=k)
    # Paired: a one-sample z test on the differences (ratio=0). The (z_{a/2} + z_b) formula ignores the far
    # tail, so it coincides exactly with a one-sided test at alpha/2.
    power = NormalIndPower().power(mde / sd, nobs1=n, alpha=0.025, ratio=0, alternative="larger")
    assert power == pytest.approx(0.8, abs=EXACT)
    solved = NormalIndPower().solve_power(
        None, nobs1=n, alpha=0.025, power=0.8, ratio=0, alternative="larger"
    )
    assert mde / sd == pytest.approx(solved, rel=1e-5)
    two_sided = NormalIndPower().power(mde / sd, nobs1=n, alpha=0.05, ratio=0)
    assert two_sided == pytest.approx(0.8, abs=1e-6)
    # Unpaired: two independent proportions with p(1-p) each.
    p = 0.7
    mde_u = stats.minimum_detectable_effect(n, 2 * p * (1 - p))
    d = mde_u / math.sqrt(p * (1 - p))
    assert NormalIndPower().power(d, nobs1=n, alpha=0.025, ratio=1, alternative="larger") == pytest.approx(
        0.8, abs=EXACT
    )
    assert d == pytest.approx(zt_ind_solve_power(None, n, 0.025, 0.8, 1.0, "larger"), rel=1e-5)


def test_cases_needed_inverts_mde() -> None:
    for effect, omega2, s2, k in [(0.02, 0.03, 0.2, 3), (0.05, 0.1, 0.0, 1), (0.1, 0.5, 0.25, 2)]:
        n = stats.cases_needed(effect, omega2, s2_a=s2, s2_b=s2, k_a=k, k_b=k)
        assert stats.minimum_detectable_effect(n, omega2, s2_a=s2, s2_b=s2, k_a=k, k_b=k) <= effect
        assert stats.minimum_detectable_effect(n - 1, omega2, s2_a=s2, s2_b=s2, k_a=k, k_b=k) > effect
        sd = math.sqrt(omega2 + 2 * s2 / k)
        n_sm = NormalIndPower().solve_power(effect / sd, None, 0.025, 0.8, ratio=0, alternative="larger")
        assert n == math.ceil(n_sm - 1e-6)
    with pytest.raises(ValueError):
        stats.cases_needed(0.0, 0.1)


def test_estimate_mde_paired_decomposition() -> None:
    v = paired_verdicts(seed=9, n=400, k=4)
    plan = stats.estimate_mde(v, "A", "B")
    a, b = case_means(v, "A"), case_means(v, "B")
    fa = v.filter(pl.col("run_id") == "A").sort("case_id", "repeat").get_column("passed").cast(pl.Float64)
    fb = v.filter(pl.col("run_id") == "B").sort("case_id", "repeat").get_column("passed").cast(pl.Float64)
    s2_a = fa.to_numpy().reshape(400, 4).var(axis=1, ddof=1).mean()
    s2_b = fb.to_numpy().reshape(400, 4).var(axis=1, ddof=1).mean()
    var_diff = (b - a).var(ddof=1)
    assert plan.method == "paired" and plan.n == 400 and plan.k_a == pytest.approx(4.0)
    assert plan.s2_a == pytest.approx(s2_a, abs=EXACT) and plan.s2_b == pytest.approx(s2_b, abs=EXACT)
    assert plan.var_diff == pytest.approx(var_diff, abs=EXACT)
    assert plan.omega2 == pytest.approx(var_diff - s2_a / 4 - s2_b / 4, abs=EXACT)
    # At the observed design the MDE is (z_{a/2} + z_b) times the paired standard error.
    se = stats.compare_runs(v, "A", "B").se
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    assert plan.mde == pytest.approx(z * se, abs=EXACT)
    more = stats.estimate_mde(v, "A", "B", k_a=16, k_b=16, n=1600)
    assert more.mde < plan.mde / 2


def test_estimate_mde_unpaired_fallback() -> None:
    v = paired_verdicts(seed=2, n=250, k=1)
    plan = stats.estimate_mde(v, "A")
    p = case_means(v, "A").mean()
    assert plan.method == "unpaired" and plan.n == 250
    assert plan.omega2 == pytest.approx(2 * p * (1 - p), abs=EXACT)
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    assert plan.mde == pytest.approx(z * math.sqrt(2 * p * (1 - p) / 250), abs=EXACT)


def test_estimate_mde_too_few_cases() -> None:
    plan = stats.estimate_mde(verdicts_from({"A": [["pass"]], "B": [["fail"]]}), "A", "B")
    assert plan.n == 1 and math.isnan(plan.mde)


def test_mcnemar_cases_needed_by_formula_and_by_simulation() -> None:
    # Connor (1987): effect .1 with discordance .2 → (1.95996·√.2 + 0.84162·√.19)² / .01 = 154.6
    assert stats.mcnemar_cases_needed(0.1, discordant=0.2) == 155
    z_a, z_b = sps.norm.ppf(0.995), sps.norm.ppf(0.9)
    expected = (z_a * math.sqrt(0.3) + z_b * math.sqrt(0.3 - 0.15**2)) ** 2 / 0.15**2
    assert stats.mcnemar_cases_needed(-0.15, discordant=0.3, alpha=0.01, power=0.9) == math.ceil(expected)
    n = stats.mcnemar_cases_needed(0.1, discordant=0.3)
    rng = np.random.default_rng(0)
    cells = rng.multinomial(n, [0.2, 0.1, 0.7], size=4000)  # b, c, concordant
    b, c = cells[:, 0], cells[:, 1]
    z = (b - c) / np.sqrt(b + c)
    power = float(np.mean(np.abs(z) > 1.959964))
    assert 0.76 < power < 0.85
    with pytest.raises(EvalkitError, match="discordant"):
        stats.mcnemar_cases_needed(0.3, discordant=0.2)
    with pytest.raises(EvalkitError, match="effect of 0"):
        stats.mcnemar_cases_needed(0.0, discordant=0.2)
