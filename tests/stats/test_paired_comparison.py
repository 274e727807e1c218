"""Paired comparisons against scipy / statsmodels: the t interval on case means, McNemar, and the sign-flip test."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from stats_testdata import (
    EXACT,
    case_means,
    paired_verdicts,
    verdicts_from,
)
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

import evalkit.stats as stats


def test_paired_comparison_against_scipy_and_statsmodels() -> None:
    v = paired_verdicts(seed=5, n=150, k=3)
    c = stats.compare_runs(v, "A", "B")
    a, b = case_means(v, "A"), case_means(v, "B")
    assert c.n == 150
    assert c.rate_a == pytest.approx(a.mean(), abs=EXACT) and c.rate_b == pytest.approx(b.mean(), abs=EXACT)
    d = b - a
    assert c.diff == pytest.approx(d.mean(), abs=EXACT)
    assert c.se == pytest.approx(d.std(ddof=1) / math.sqrt(len(d)), abs=EXACT)
    ttest = sps.ttest_rel(b, a)
    assert c.diff / c.se == pytest.approx(ttest.statistic, abs=1e-9)
    assert c.t_pvalue == pytest.approx(ttest.pvalue, abs=EXACT)
    ci = ttest.confidence_interval(0.95)
    assert c.ci_low == pytest.approx(ci.low, abs=EXACT) and c.ci_high == pytest.approx(ci.high, abs=EXACT)
    t_crit = sps.t.ppf(0.975, len(d) - 1)
    assert c.ci_high - c.diff == pytest.approx(t_crit * c.se, abs=EXACT)

    pass_a, pass_b = a > 0.5, b > 0.5
    assert c.table == [
        [int((pass_a & pass_b).sum()), int((pass_a & ~pass_b).sum())],
        [int((~pass_a & pass_b).sum()), int((~pass_a & ~pass_b).sum())],
    ]
    exact = sm_mcnemar(np.array(c.table), exact=True)
    assert c.mcnemar_exact_p == pytest.approx(exact.pvalue, abs=EXACT)
    binom = sps.binomtest(c.only_a, c.only_a + c.only_b, 0.5)
    assert c.mcnemar_exact_p == pytest.approx(binom.pvalue, abs=EXACT)
    chi2 = sm_mcnemar(np.array(c.table), exact=False, correction=True)
    assert c.only_a != c.only_b
    assert c.mcnemar_chi2 == pytest.approx(chi2.statistic, abs=EXACT)
    assert c.mcnemar_chi2_p == pytest.approx(chi2.pvalue, abs=EXACT)
    m, n = min(c.only_a, c.only_b), c.discordant
    midp = 2 * sps.binom.cdf(m, n, 0.5) - sps.binom.pmf(m, n, 0.5)
    assert c.mcnemar_midp == pytest.approx(midp, abs=EXACT)

    flips = c.flipped
    assert flips.height == c.discordant
    assert (flips.get_column("direction") == "pass->fail").sum() == c.only_a
    assert (flips.get_column("direction") == "fail->pass").sum() == c.only_b


@pytest.mark.parametrize(
    ("b", "c"),
    [
        (0, 1),
        (1, 0),
        (0, 5),
        (3, 7),
        (7, 3),
        (3, 9),
        (12, 2),
        (25, 25),
        (40, 61),
        (10, 10),
        (5, 6),
        (12, 40),
        (100, 130),
        (400, 350),
        (2500, 2700),
    ],
)
def test_mcnemar_grid(b: int, c: int) -> None:
    table = np.array([[5, b], [c, 5]])
    exact, midp, chi2, chi2_p = stats.mcnemar(b, c)
    assert exact == pytest.approx(sm_mcnemar(table, exact=True).pvalue, abs=EXACT)
    assert exact == pytest.approx(sps.binomtest(b, b + c, 0.5).pvalue, abs=EXACT)
    k, n = min(b, c), b + c
    assert midp == pytest.approx(min(1.0, 2 * sps.binom.cdf(k, n, 0.5) - sps.binom.pmf(k, n, 0.5)), abs=EXACT)
    assert chi2 == pytest.approx(max(abs(b - c) - 1, 0) ** 2 / n, abs=EXACT)
    if b != c:
        reference = sm_mcnemar(table, exact=False)
        assert chi2 == pytest.approx(reference.statistic, abs=EXACT)
        assert chi2_p == pytest.approx(reference.pvalue, abs=EXACT)
    else:
        assert chi2 == 0.0 and chi2_p == 1.0 and exact == 1.0 and midp == pytest.approx(1.0, abs=EXACT)


def test_no_discordant_pairs() -> None:
    assert stats.mcnemar(0, 0) == (1.0, 1.0, 0.0, 1.0)
    v = verdicts_from({"A": [["pass"], ["fail"], ["pass"]], "B": [["pass"], ["fail"], ["pass"]]})
    c = stats.compare_runs(v, "A", "B")
    assert (c.both_pass, c.only_a, c.only_b, c.both_fail) == (2, 0, 0, 1)
    assert c.mcnemar_exact_p == 1.0 and c.mcnemar_midp == 1.0 and c.mcnemar_chi2_p == 1.0
    assert c.diff == 0.0 and c.se == 0.0 and c.t_pvalue == 1.0 and c.flipped.height == 0


def test_flipped_cases_and_unshared_cases_are_reported() -> None:
    v = verdicts_from(
        {
            "A": [["pass", "pass"], ["fail", "fail"], ["pass", "fail"], ["pass", "pass"], ["error", "error"]],
            "B": [["fail", "fail"], ["pass", "pass"], ["pass", "fail"], ["pass", "pass"], ["pass", "pass"]],
        }
    )
    extra_a = verdicts_from({"A": [["pass"]] * 7}).filter(pl.col("case_id") == "c0006")
    extra_b = verdicts_from({"B": [["pass"]] * 9}).filter(pl.col("case_id").is_in(["c0007", "c0008"]))
    c = stats.compare_runs(pl.concat([v, extra_a, extra_b]), "A", "B")
    assert c.missing_in_b == ["c0006"] and c.missing_in_a == ["c0007", "c0008"]
    assert c.unscored == ["c0004"]
    assert c.n == 4
    # c0002 is a 1-1 tie in both runs: a tie is not a majority pass, so it is not a flip.
    assert c.flipped.select("case_id", "direction").rows() == [
        ("c0000", "pass->fail"),
        ("c0001", "fail->pass"),
    ]
    assert (c.both_pass, c.only_a, c.only_b, c.both_fail) == (1, 1, 1, 1)


def test_compare_single_and_no_shared_case() -> None:
    c = stats.compare_runs(verdicts_from({"A": [["pass"]], "B": [["fail"]]}), "A", "B")
    # One case has no SE, but it still has a (wide) interval, and one flip is never significant.
    assert c.n == 1 and c.diff == -1.0 and math.isnan(c.se) and c.ci_method == "newcombe"
    assert c.ci_low == -1.0 and 0.0 < c.ci_high < 1.0 and not c.significant
    assert c.only_a == 1 and c.mcnemar_exact_p == 1.0
    none = stats.compare_runs(verdicts_from({"A": [["pass"]]}), "A", "B")
    assert none.n == 0 and math.isnan(none.diff) and none.missing_in_b == ["c0000"]
    assert none.mcnemar_exact_p == 1.0


outcome = st.sampled_from(["pass", "fail", "error"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(outcome, min_size=1, max_size=3), st.lists(outcome, min_size=1, max_size=3)),
        min_size=1,
        max_size=30,
    )
)
def test_swapping_runs_flips_sign_and_swaps_discordant(pairs: list[tuple[list[str], list[str]]]) -> None:
    v = verdicts_from({"A": [p[0] for p in pairs], "B": [p[1] for p in pairs]})
    ab = stats.compare_runs(v, "A", "B")
    ba = stats.compare_runs(v, "B", "A")
    assert ab.n == ba.n
    assert (ab.only_a, ab.only_b, ab.both_pass, ab.both_fail) == (
        ba.only_b,
        ba.only_a,
        ba.both_pass,
        ba.both_fail,
    )
    assert ab.both_pass + ab.only_a + ab.only_b + ab.both_fail == ab.n
    assert ab.mcnemar_exact_p == ba.mcnemar_exact_p and ab.mcnemar_midp == ba.mcnemar_midp
    for p in (ab.mcnemar_exact_p, ab.mcnemar_midp, ab.mcnemar_chi2_p):
        assert 0.0 <= p <= 1.0
    assert ab.mcnemar_midp <= ab.mcnemar_exact_p + 1e-12
    if ab.n:
        assert ab.diff == pytest.approx(-ba.diff, abs=1e-12)
        assert 0.0 <= ab.rate_a <= 1.0 and 0.0 <= ab.rate_b <= 1.0
    if ab.n >= 2:
        assert ab.se == pytest.approx(ba.se, abs=1e-12)
        assert ab.ci_low == pytest.approx(-ba.ci_high, abs=1e-12)
        assert ab.ci_low <= ab.diff <= ab.ci_high
    flipped_back = {"pass->fail": "fail->pass", "fail->pass": "pass->fail"}
    assert sorted(ab.flipped.select("case_id", "direction").rows()) == sorted(
        (case, flipped_back[d]) for case, d in ba.flipped.select("case_id", "direction").rows()
    )
    assert ab.p == ba.p and ab.test == ba.test and ab.significant is ba.significant


def _brute_force_sign_flip(d: list[Fraction]) -> float:
    """P(|sum of the differences with random signs| >= |observed sum|), over every sign pattern, in fractions."""
    moved = [x for x in d if x != 0]
    observed = abs(sum(moved))
    hits = sum(
        1
        for signs in itertools.product((1, -1), repeat=len(moved))
        if abs(sum(s * x for s, x in zip(signs, moved, strict=True))) >= observed
    )
    return hits / 2 ** len(moved)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 5),
    st.integers(1, 5),
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), min_size=1, max_size=13),
)
def test_sign_flip_test_against_enumeration_and_scipy(
    k_a: int, k_b: int, draws: list[tuple[int, int]]
) -> None:
    d = [Fraction(x % (k_b + 1), k_b) - Fraction(y % (k_a + 1), k_a) for x, y in draws]
    got = stats.sign_flip_test([float(x) for x in d])
    assert got == pytest.approx(_brute_force_sign_flip(d), abs=1e-12)
    values = np.array([float(x) for x in d])
    if len(d) >= 2 and sum(d) != 0:  # scipy compares float sums with a tolerance; an exact 0 sum is p = 1
        ref = sps.permutation_test(
            (values,), np.sum, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
        )
        assert got == pytest.approx(ref.pvalue, abs=1e-12)


@pytest.mark.parametrize(("b", "c"), [(0, 1), (3, 9), (12, 2), (25, 25), (40, 61), (400, 350), (600, 700)])
def test_sign_flip_test_on_single_verdicts_is_mcnemars_exact_test(b: int, c: int) -> None:
    d = [-1.0] * b + [1.0] * c + [0.0] * 7
    expected = sps.binomtest(b, b + c, 0.5).pvalue
    # exact up to SIGN_FLIP_EXACT_CASES moved cases; above, the normal limit with its continuity correction
    rel = 1e-9 if b + c <= stats.SIGN_FLIP_EXACT_CASES else 0.01
    assert stats.sign_flip_test(d) == pytest.approx(expected, rel=rel, abs=1e-300)
    assert stats.sign_flip_test(d) == pytest.approx(stats.mcnemar(b, c)[0], rel=rel, abs=1e-300)


def test_sign_flip_test_above_the_exact_limit_uses_its_normal_limit() -> None:
    rng = np.random.default_rng(4)
    n = stats.SIGN_FLIP_EXACT_CASES + 200
    d = rng.integers(0, 4, n) / 3 - rng.integers(0, 4, n) / 3 + 0.01 * (rng.random(n) < 0.6)
    got = stats.sign_flip_test(list(d))
    ref = sps.permutation_test(
        (d,), np.sum, permutation_type="samples", n_resamples=40_000, alternative="two-sided", random_state=1
    )
    assert 0.001 < got < 0.999
    assert got == pytest.approx(ref.pvalue, abs=4 * math.sqrt(ref.pvalue * (1 - ref.pvalue) / 40_000) + 0.002)
    # at the limit the exact distribution and the normal one agree
    m = stats.SIGN_FLIP_EXACT_CASES
    moved = rng.integers(0, 4, m) / 3 - rng.integers(0, 4, m) / 3
    moved = np.where(moved == 0, 1 / 3, moved)
    exact = stats.sign_flip_test(list(moved))
    normal = stats.sign_flip_test([*moved, 0.001, -0.001])  # two more moved cases: the normal limit
    assert exact == pytest.approx(normal, abs=0.01)
    assert stats.sign_flip_test([0.0, 0.0]) == 1.0


def test_with_repeats_significance_comes_from_the_sign_flip_test() -> None:
    # issue 23, reproduction 2: 40 cases passing 3/3 against 38 of them passing 2/3. McNemar on the majority
    # verdicts sees no change (p = 1); the t test on case means gives p = 5.6e-27; the sign-flip test, which
    # sees the 38 cases that moved, gives 2 / 2^38.
    v = verdicts_from({"A": [["pass"] * 3] * 40, "B": [["pass", "pass", "fail"]] * 38 + [["pass"] * 3] * 2})
    c = stats.compare_runs(v, "A", "B")
    assert c.diff == pytest.approx(-38 / 120) and c.mcnemar_exact_p == 1.0
    assert f"{c.t_pvalue:.1e}" == "5.5e-27"
    assert c.test == "sign-flip" and c.p == pytest.approx(2 / 2**38) and c.significant
    assert c.p_label == "sign-flip p" and c.test_name == "the sign-flip test on case pass rates"
    # against scipy's exact sign-flip enumeration on 14 of the case means (2^40 sign patterns are too many to list)
    d = (case_means(v, "B") - case_means(v, "A"))[:14]
    ref = sps.permutation_test((d,), np.sum, permutation_type="samples", n_resamples=np.inf)
    assert stats.sign_flip_test(list(d)) == pytest.approx(ref.pvalue, rel=1e-9)
    # with one verdict a side the test is McNemar's, reported as such
    one = stats.compare_runs(paired_verdicts(seed=3, n=80, k=1), "A", "B")
    assert one.test == "mcnemar" and one.p == one.mcnemar_exact_p and one.significant is (one.p < 0.05)
    many = stats.compare_runs(paired_verdicts(seed=3, n=80, k=3), "A", "B")
    d = case_means(paired_verdicts(seed=3, n=80, k=3), "B") - case_means(
        paired_verdicts(seed=3, n=80, k=3), "A"
    )
    assert many.test == "sign-flip" and many.p == pytest.approx(stats.sign_flip_test(list(d)), abs=1e-15)
