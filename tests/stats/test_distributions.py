"""Distribution helpers against scipy, including the far binomial tail."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from stats_testdata import (
    verdicts_from,
)

import evalkit.stats as stats


@pytest.mark.parametrize("df", [1, 2, 3, 5, 9, 29, 100, 1000, 20_000])
def test_t_distribution_helpers_match_scipy(df: int) -> None:
    for q in (0.6, 0.9, 0.95, 0.975, 0.995, 0.9999):
        assert stats.t_ppf(q, df) == pytest.approx(sps.t.ppf(q, df), rel=1e-11)
        assert stats.t_ppf(1 - q, df) == pytest.approx(sps.t.ppf(1 - q, df), rel=1e-11)
    for t in (0.0, 0.3, 1.0, 1.96, 3.0, 8.0):
        assert stats.t_sf(t, df) == pytest.approx(sps.t.sf(t, df), rel=1e-11, abs=1e-300)
        assert stats.t_sf(-t, df) == pytest.approx(sps.t.sf(-t, df), rel=1e-11)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=5000), st.floats(min_value=0.0, max_value=1.0))
@example(n=1075, frac=0.03125)  # scipy gives 0.0 there; the tail is 1.9e-261
def test_binomial_tail_matches_scipy(n: int, frac: float) -> None:
    from fractions import Fraction
    from math import comb

    k = int(frac * n)
    expected = sps.binom.cdf(k, n, 0.5)
    if expected < 1e-290:  # scipy underflows to 0 far out in the tail: there, the exact sum is the reference
        expected = float(Fraction(sum(comb(n, i) for i in range(k + 1)), 2**n))
    assert stats.binom_cdf_half(k, n) == pytest.approx(expected, rel=1e-10, abs=1e-300)


def test_invalid_arguments() -> None:
    v = verdicts_from({"r": [["pass"]]})
    with pytest.raises(ValueError):
        stats.pass_rate(v, confidence=1.0)
    with pytest.raises(ValueError, match="missing columns"):
        stats.pass_rate(v, by="nope")
    with pytest.raises(ValueError):
        stats.minimum_detectable_effect(10, -0.1)
    with pytest.raises(ValueError):
        stats.t_ppf(1.0, 3)
