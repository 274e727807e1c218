"""Minimum detectable effect and cases needed: the sign-flip test's power, against Connor's McNemar formula and a
numerical solution of its power equation."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from scipy.optimize import brentq
from stats_testdata import (
    EXACT,
    bernoulli_statuses,
    case_means,
    paired_verdicts,
    verdicts_from,
)

import evalkit.stats as stats
from evalkit.errors import EvalkitError


def reference_mde(n: int, v: float, *, k: int = 1, alpha: float = 0.05, power: float = 0.8) -> float:
    """The sign-flip test's MDE, solved numerically: the root of Connor's power equation with v + delta^2 the
    mean squared difference, plus the continuity correction of half the test's step, 1 / (k n)."""
    za, zb = sps.norm.ppf(1 - alpha / 2), sps.norm.ppf(power)
    root = brentq(lambda d: d * math.sqrt(n) - za * math.sqrt(v + d * d) - zb * math.sqrt(v), 1e-12, 50.0)
    return float(root) + 1.0 / (k * n)


def test_mde_hand_computation() -> None:
    got = stats.minimum_detectable_effect(200, 0.05, s2_a=0.2, s2_b=0.15, k_a=3, k_b=5)
    assert got == pytest.approx(reference_mde(200, 0.05 + 0.2 / 3 + 0.15 / 5, k=15), abs=EXACT)
    got = stats.minimum_detectable_effect(50, 0.1, alpha=0.01, power=0.9)
    assert got == pytest.approx(reference_mde(50, 0.1, alpha=0.01, power=0.9), abs=EXACT)
    assert stats.minimum_detectable_effect(0, 0.1) == math.inf
    assert stats.minimum_detectable_effect(3, 0.1) == math.inf  # n <= z^2: no sample that small can reach 80%


def test_mde_is_connors_mcnemar_power_with_one_repeat() -> None:
    # With one repeat a case's difference is -1, 0 or 1, the sign-flip test is McNemar's exact test, and
    # v + delta^2 is the discordant share: the MDE without its continuity correction inverts Connor (1987).
    for n, v in [(300, 0.2), (120, 0.15), (40, 0.3)]:
        mde = stats.minimum_detectable_effect(n, v)
        delta = mde - 1.0 / n
        za = sps.norm.ppf(0.975)
        power = sps.norm.cdf((delta * math.sqrt(n) - za * math.sqrt(v + delta**2)) / math.sqrt(v))
        assert power == pytest.approx(0.8, abs=1e-9)
        assert stats.mcnemar_cases_needed(delta * (1 + 1e-9), discordant=v + delta**2) == n
    # the continuity correction is half the step of the test's sum: 1/n with one repeat, 1/(n lcm(k_a, k_b))
    assert stats.minimum_detectable_effect(100, 0.1, k_a=3, k_b=3) - reference_mde(100, 0.1 / 1, k=3) == (
        pytest.approx(0.0, abs=EXACT)
    )


def test_cases_needed_inverts_mde() -> None:
    for effect, omega2, s2, k in [(0.02, 0.03, 0.2, 3), (0.05, 0.1, 0.0, 1), (0.1, 0.5, 0.25, 2)]:
        n = stats.cases_needed(effect, omega2, s2_a=s2, s2_b=s2, k_a=k, k_b=k)
        assert stats.minimum_detectable_effect(n, omega2, s2_a=s2, s2_b=s2, k_a=k, k_b=k) <= effect
        assert stats.minimum_detectable_effect(n - 1, omega2, s2_a=s2, s2_b=s2, k_a=k, k_b=k) > effect
        # at least Connor's n, which has no continuity correction
        v = omega2 + 2 * s2 / k
        za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
        assert n >= (za * math.sqrt(v + effect**2) + zb * math.sqrt(v)) ** 2 / effect**2
    assert stats.cases_needed(0.05, 0.0) == 20  # no variance: the continuity correction alone, 1 / n
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
    assert plan.test == "sign-flip"
    assert plan.s2_a == pytest.approx(s2_a, abs=EXACT) and plan.s2_b == pytest.approx(s2_b, abs=EXACT)
    assert plan.var_diff == pytest.approx(var_diff, abs=EXACT)
    assert plan.omega2 == pytest.approx(var_diff - s2_a / 4 - s2_b / 4, abs=EXACT)
    # at the observed design the MDE is the sign-flip test's for the observed variance of the differences
    assert plan.mde == pytest.approx(reference_mde(400, var_diff, k=4), abs=EXACT)
    more = stats.estimate_mde(v, "A", "B", k_a=16, k_b=16, n=1600)
    assert more.mde < plan.mde / 2


def _one_run(p: np.ndarray, k: int, seed: int) -> pl.DataFrame:
    return verdicts_from({"A": bernoulli_statuses(np.random.default_rng(seed), p, k)})


def test_estimate_mde_unpaired_with_one_repeat_is_the_two_proportion_mde() -> None:
    v = paired_verdicts(seed=2, n=250, k=1).filter(pl.col("run_id") == "A")
    plan = stats.estimate_mde(v, "A")
    p = case_means(v, "A").mean()
    assert plan.method == "unpaired" and plan.n == 250 and plan.test == "mcnemar"
    # the change moves the rate towards 1/2, where a pass rate varies most; v = p(1-p) + q(1-q) at the new rate q
    q = p + plan.mde if p < 0.5 else p - plan.mde
    assert plan.var_diff == pytest.approx(p * (1 - p) + q * (1 - q), abs=1e-9)
    assert plan.mde == pytest.approx(reference_mde(250, plan.var_diff), abs=1e-9)
    # larger than the figure of the variance at the old rate alone, which 80% power needs
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    assert plan.mde > (za + zb) * math.sqrt(2 * p * (1 - p) / 250)


def test_the_single_run_mde_accounts_for_repeats() -> None:
    # issue 23: a flaky suite run with 5 repeats claimed an MDE as if it had one (24.9 pts), while two reruns of
    # it compare with an MDE of 10.0-11.6. Here 60 cases, each passing 65% of the time.
    p = np.full(60, 0.65)
    run = _one_run(p, 5, seed=1)
    plan = stats.estimate_mde(run, "A")
    old = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * math.sqrt(2 * 0.65 * 0.35 / 60)
    assert plan.test == "sign-flip" and plan.k_a == pytest.approx(5.0)
    observed = []
    for seed in range(2, 14):
        again = _one_run(p, 5, seed=seed).with_columns(pl.lit("B").alias("run_id"))
        observed.append(stats.estimate_mde(pl.concat([run, again]), "A", "B").mde)
    assert plan.mde < old / 1.8
    assert min(observed) * 0.9 < plan.mde < max(observed) * 1.3
    one = stats.estimate_mde(run.filter(pl.col("repeat") == 0), "A")
    assert one.test == "mcnemar" and one.mde > 2 * plan.mde


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


def test_an_mde_beyond_100_points_is_not_reachable_never_a_figure_over_100() -> None:
    from evalkit._report._text import mde_sentence

    # 4 cases, one repeat, two discordant pairs going both ways: Connor's equation gives 18.3 (1,831.7 pts)
    rows = [("A", f"c{i}", s) for i, s in enumerate(["pass", "fail", "pass", "pass"])]
    rows += [("B", f"c{i}", s) for i, s in enumerate(["pass", "pass", "fail", "pass"])]
    v = pl.DataFrame(rows, schema=["run_id", "case_id", "status"], orient="row").with_columns(
        pl.lit("s").alias("slice"), pl.lit(0).alias("repeat")
    )
    plan = stats.estimate_mde(v, "A", "B")
    assert plan.n == 4 and math.isinf(plan.mde)
    said = mde_sentence(plan)
    assert "n/a" in said and "4 cases" in said and "pts" not in said
    # the formula itself: a finite answer is a difference of proportions, at most 1
    assert math.isinf(stats.minimum_detectable_effect(5, 0.25))
    assert 0 < stats.minimum_detectable_effect(400, 0.25) <= 1
    for n in range(1, 60):
        mde = stats.minimum_detectable_effect(n, 0.2, s2_a=0.2, s2_b=0.2, k_a=3, k_b=3)
        assert math.isinf(mde) or mde <= 1.0
