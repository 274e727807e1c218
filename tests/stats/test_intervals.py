"""Intervals for differences of pass rates: valid on small and degenerate slices, checked against references."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from stats_testdata import verdicts_from
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

import evalkit.stats as stats

EXACT = 1e-9


def reference_method10(a: int, b: int, c: int, d: int, alpha: float = 0.05) -> tuple[float, float]:
    """Newcombe (1998), method 10, written out from the paper with statsmodels' Wilson intervals.

    Table of pairs (first, second): a = both +, b = first + second -, c = first - second +, d = both -.
    The interval is for p1 - p2 = (b - c) / n.
    """
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_confint(a + b, n, alpha=alpha, method="wilson")
    l2, u2 = proportion_confint(a + c, n, alpha=alpha, method="wilson")
    e, f, g, h = a + b, c + d, a + c, b + d
    if e * f * g * h == 0:
        phi = 0.0
    else:
        ad_bc = a * d - b * c
        corrected = ad_bc - n / 2 if ad_bc > n / 2 else (0.0 if ad_bc >= 0 else ad_bc)
        phi = corrected / math.sqrt(e * f * g * h)
    delta = math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    epsilon = math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return (p1 - p2 - delta, p1 - p2 + epsilon)


def ours(a: int, b: int, c: int, d: int) -> stats.Interval:
    # first = run B, second = run A: b passes only in B, c only in A.
    ci = stats.newcombe_paired(a, c, b, d)
    assert ci is not None
    return ci


def test_newcombe_published_example() -> None:
    # Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (2017), ch. 8: complete response
    # before and after consolidation therapy (Cavo et al. 2012), table [[59, 6], [16, 80]]: the Newcombe
    # square-and-add interval is -0.0621 (95% CI -0.1186 to -0.0046).
    low, high = ours(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    assert pytest.approx(-0.0621, abs=5e-5) == (6 - 16) / 161


@pytest.mark.parametrize(
    ("a", "b", "c", "d", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17:2635, Table II, method 10
        (36, 12, 2, 0, 0.0569, 0.3404),
        (18, 12, 2, 18, 0.0562, 0.3290),
        (53, 0, 0, 1, -0.0729, 0.0729),
        (0, 30, 0, 0, 0.8395, 1.0),
    ],
)
def test_newcombe_matches_published_examples(a: int, b: int, c: int, d: int, low: float, high: float) -> None:
    lo, hi = ours(a, b, c, d)
    assert lo == pytest.approx(low, abs=1e-4)
    assert hi == pytest.approx(high, abs=1e-4)


def test_no_interval_is_none_for_every_scalar_interval() -> None:
    # the package's convention: None where no interval is defined, never (nan, nan)
    assert stats.wilson_interval(0, 0) is None
    assert stats.wilson_interval(0, 0, confidence=0.9) is None
    assert stats.newcombe_paired(0, 0, 0, 0) is None
    assert stats.paired_means_interval([], []) is None
    assert stats.independent_interval(0.5, 0, 0.5, 10) is None
    assert stats.independent_interval(0.5, 10, math.nan, 10) is None
    assert stats.t_interval(0.5, math.nan, 1) is None
    assert stats.t_interval(0.5, 0.2, 1) is None
    assert stats.t_interval(math.nan, math.nan, 0) is None
    # a comparison keeps float fields: NaN there, as for its other undefined numbers
    none = stats.compare_runs(verdicts_from({"A": [["pass"]]}), "A", "B")
    assert none.n == 0 and math.isnan(none.ci_low) and math.isnan(none.ci_high)


def test_an_interval_is_a_named_pair() -> None:
    ci = stats.wilson_interval(3, 10)
    assert isinstance(ci, stats.Interval) and isinstance(ci, tuple)
    low, high = ci
    assert (ci.low, ci.high) == (low, high) == (ci[0], ci[1])
    assert ci == pytest.approx(proportion_confint(3, 10, method="wilson"), abs=EXACT)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
@pytest.mark.parametrize(
    "values", [[0.5, 1.0, -0.25, 2.0], [1.0, 1.5], [0.1] * 3 + [0.4] * 7, [3.0, 3.0, 3.0, 3.0]]
)
def test_t_interval_matches_scipy(values: list[float], confidence: float) -> None:
    n = len(values)
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    got = stats.t_interval(mean, sd, n, confidence=confidence)
    assert got is not None
    if sd == 0.0:
        assert got == (mean, mean)  # scipy gives (nan, nan) for a constant sample
        return
    ref = sps.ttest_1samp(values, 0.0).confidence_interval(confidence_level=confidence)
    assert got == pytest.approx((ref.low, ref.high), abs=EXACT)


@pytest.mark.parametrize(
    "table",
    [
        (1, 1, 7, 12),  # airway hyper-responsiveness (Bentur et al. 2009), the same chapter's other example
        (59, 6, 16, 80),
        (36, 12, 2, 0),
        (0, 0, 0, 1),
        (1, 0, 0, 0),
        (0, 2, 0, 0),
        (10, 0, 0, 10),
        (0, 5, 5, 0),
        (3, 0, 4, 9),
        (250, 31, 12, 707),
    ],
)
def test_newcombe_matches_the_method_written_out(table: tuple[int, int, int, int]) -> None:
    for confidence in (0.9, 0.95, 0.99):
        expected = reference_method10(*table, alpha=1 - confidence)
        low, high = stats.newcombe_paired(table[0], table[2], table[1], table[3], confidence=confidence)
        assert low == pytest.approx(max(expected[0], -1.0), abs=EXACT)
        assert high == pytest.approx(min(expected[1], 1.0), abs=EXACT)


counts = st.integers(min_value=0, max_value=60)


@settings(max_examples=300, deadline=None)
@given(counts, counts, counts, counts, st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_newcombe_lies_in_range_and_contains_the_estimate(
    a: int, only_a: int, only_b: int, d: int, confidence: float
) -> None:
    n = a + only_a + only_b + d
    ci = stats.newcombe_paired(a, only_a, only_b, d, confidence=confidence)
    if n == 0:
        assert ci is None
        return
    assert ci is not None
    low, high = ci
    diff = (only_b - only_a) / n
    assert -1.0 <= low <= diff <= high <= 1.0
    assert high - low > 0.0
    # The same construction on the cases' 0/1 verdicts gives the same interval.
    means_a = [1.0] * (a + only_a) + [0.0] * (only_b + d)
    means_b = [1.0] * a + [0.0] * only_a + [1.0] * only_b + [0.0] * d
    got = stats.paired_means_interval(means_a, means_b, confidence=confidence)
    assert got == pytest.approx((low, high), abs=EXACT)


repeats = st.lists(st.sampled_from(["pass", "fail", "error"]), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(repeats, repeats), min_size=1, max_size=25), st.sampled_from([0.9, 0.95]))
def test_every_paired_interval_lies_in_range_and_contains_the_estimate(
    pairs: list[tuple[list[str], list[str]]], confidence: float
) -> None:
    v = verdicts_from({"A": [p[0] for p in pairs], "B": [p[1] for p in pairs]})
    c = stats.compare_runs(v, "A", "B", confidence=confidence)
    if c.n == 0:
        return
    assert -1.0 <= c.ci_low <= c.diff <= c.ci_high <= 1.0, c.ci_method
    assert c.ci_high > c.ci_low
    assert c.significant is (c.p < c.alpha)
    if c.test == "mcnemar":
        assert c.p == c.mcnemar_exact_p
    if c.significant:
        # m cases that moved give at best p = 2 / 2^m, by either test
        moved = sum(
            1 for a, b in pairs if _mean(a) is not None and _mean(b) is not None and _mean(a) != _mean(b)
        )
        assert moved >= c.min_discordant


def _mean(statuses: list[str]) -> float | None:
    scored = [s == "pass" for s in statuses if s in ("pass", "fail")]
    return sum(scored) / len(scored) if scored else None


def test_small_slice_with_repeats_stays_within_100_points() -> None:
    # Two cases, three repeats: the t interval on one degree of freedom ran to about -490 to +360 points.
    v = verdicts_from({"A": [["pass"] * 3, ["pass"] * 3], "B": [["fail"] * 3, ["pass", "pass", "fail"]]})
    c = stats.compare_runs(v, "A", "B")
    assert c.ci_method == "newcombe-means"
    assert c.diff == pytest.approx(-2 / 3)
    assert -1.0 <= c.ci_low < c.diff < c.ci_high <= 1.0
    assert not c.significant


def test_two_flipped_cases_have_a_wide_interval_and_are_not_significant() -> None:
    # Both cases of a 2-case slice flip: the t interval had zero width at -100 points, marked significant.
    v = verdicts_from({"A": [["pass"], ["pass"]], "B": [["fail"], ["fail"]]})
    c = stats.compare_runs(v, "A", "B")
    assert c.ci_method == "newcombe" and c.mcnemar_exact_p == 0.5
    assert c.ci_low == -1.0 and c.ci_high - c.ci_low > 0.5
    assert not c.significant


def test_unchanged_repeats_do_not_give_a_zero_width_interval() -> None:
    # Every case scores the same in both runs: the differences have no spread and the t interval was [0, 0].
    cases = [["pass", "fail", "pass"], ["pass", "pass", "pass"], ["fail", "fail", "pass"]] * 8
    c = stats.compare_runs(verdicts_from({"A": cases, "B": cases}), "A", "B")
    assert c.n == 24 and c.diff == 0.0 and c.se == 0.0
    assert c.ci_method == "newcombe-means"
    assert c.ci_low < 0.0 < c.ci_high and c.ci_high - c.ci_low > 0.05
    assert not c.significant


def test_large_samples_with_repeats_keep_the_t_interval() -> None:
    rows = [["pass", "pass", "fail"], ["fail", "fail", "pass"], ["pass", "pass", "pass"]] * 10
    better = [["pass", "pass", "pass"], ["fail", "pass", "pass"], ["pass", "pass", "pass"]] * 10
    v = verdicts_from({"A": rows, "B": better})
    c = stats.compare_runs(v, "A", "B")
    assert c.ci_method == "t" and c.n == 30 >= stats.MIN_T_CASES
    a = [sum(s == "pass" for s in r) / 3 for r in rows]
    b = [sum(s == "pass" for s in r) / 3 for r in better]
    ci = sps.ttest_rel(b, a).confidence_interval(0.95)
    assert c.ci_low == pytest.approx(ci.low, abs=EXACT) and c.ci_high == pytest.approx(ci.high, abs=EXACT)


@pytest.mark.parametrize("alpha", [0.2, 0.1, 0.05, 0.01, 0.001])
def test_fewest_discordant_pairs_comes_from_the_exact_test(alpha: float) -> None:
    m = stats.min_discordant_for_significance(alpha=alpha)
    assert sps.binomtest(0, m, 0.5).pvalue < alpha <= sps.binomtest(0, m - 1, 0.5).pvalue


def test_significance_needs_enough_discordant_pairs() -> None:
    assert stats.min_discordant_for_significance(alpha=0.05) == 6
    for flips in range(1, 8):
        v = verdicts_from(
            {"A": [["pass"]] * flips + [["pass"]] * 20, "B": [["fail"]] * flips + [["pass"]] * 20}
        )
        c = stats.compare_runs(v, "A", "B")
        assert c.discordant == flips
        assert c.significant is (flips >= 6), flips
        assert c.significant is (c.mcnemar_exact_p < 0.05)


@pytest.mark.parametrize(
    ("dev", "holdout"), [((1, 1), (0, 1)), ((5, 5), (0, 3)), ((90, 100), (30, 50)), ((2, 3), (1, 2))]
)
def test_dev_vs_holdout_interval_is_newcombes_and_never_collapses(
    dev: tuple[int, int], holdout: tuple[int, int]
) -> None:
    records = [
        {"case_id": f"{split}-{i}", "split": split, "status": "pass" if i < x else "fail"}
        for split, (x, n) in (("dev", dev), ("holdout", holdout))
        for i in range(n)
    ]
    row = stats.dev_vs_holdout(pl.DataFrame(records)).row(0, named=True)
    low, high = confint_proportions_2indep(*dev, *holdout, method="newcomb", compare="diff")
    assert row["diff_ci_low"] == pytest.approx(max(low, -1.0), abs=EXACT)
    assert row["diff_ci_high"] == pytest.approx(min(high, 1.0), abs=EXACT)
    assert -1.0 <= row["diff_ci_low"] < row["diff"] <= row["diff_ci_high"] <= 1.0
    assert stats.independent_interval(
        dev[0] / dev[1], dev[1], holdout[0] / holdout[1], holdout[1]
    ) == pytest.approx((row["diff_ci_low"], row["diff_ci_high"]), abs=EXACT)
    if dev == (1, 1):
        assert row["warning"] is False  # one case each: the old normal interval was the point [1, 1]
