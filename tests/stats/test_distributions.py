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


@pytest.mark.parametrize("q", [1e-300, 1e-20, 1e-6, 0.025, 0.1, 0.5, 0.8, 0.975, 0.995, 1 - 1e-12])
def test_normal_quantile_matches_scipy(q: float) -> None:
    assert stats.normal_ppf(q) == pytest.approx(sps.norm.ppf(q), rel=1e-13)
    assert stats.z_critical(0.95) == pytest.approx(sps.norm.ppf(0.975), rel=1e-14)


@pytest.mark.parametrize("x", [0.0, 1e-9, 0.5, 1.0, 3.841458820694124, 10.0, 50.0, 300.0])
def test_chi_square_tail_matches_scipy(x: float) -> None:
    assert stats.chi2_1_sf(x) == pytest.approx(sps.chi2.sf(x, 1), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize(("k", "n"), [(4_990, 10_001), (2_400, 5_000), (2_500, 5_001), (0, 6_000)])
def test_binomial_tail_on_both_sides_of_the_exact_limit(k: int, n: int) -> None:
    assert stats.binom_cdf_half(k, n) == pytest.approx(sps.binom.cdf(k, n, 0.5), rel=1e-9, abs=1e-300)


def test_a_run_summary_does_not_import_scipy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, evalkit.stats as s; s.z_critical(0.9); s.wilson_interval(3, 10); s.chi2_1_sf(2.0); "
        "s.binom_cdf_half(3, 40); print('scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


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
