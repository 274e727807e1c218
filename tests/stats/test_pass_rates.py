"""Pass rates against statsmodels: Wilson intervals, clustered SEs, flip rates, the noise floor."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from stats_testdata import (
    EXACT,
    case_means,
    check_row,
    paired_verdicts,
    rows_frame,
    verdicts_from,
)
from statsmodels.stats.proportion import proportion_confint

import evalkit.stats as stats


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize(
    ("passes", "n"), [(0, 1), (1, 1), (0, 10), (10, 10), (3, 10), (7, 13), (1, 1000), (500, 1000)]
)
def test_wilson_interval_matches_statsmodels(passes: int, n: int, confidence: float) -> None:
    low, high = proportion_confint(passes, n, alpha=1 - confidence, method="wilson")
    got = stats.wilson_interval(passes, n, confidence=confidence)
    assert got is not None
    assert got[0] == pytest.approx(max(low, 0.0), abs=EXACT)
    assert got[1] == pytest.approx(min(high, 1.0), abs=EXACT)
    v = verdicts_from({"r": [["pass"]] * passes + [["fail"]] * (n - passes)})
    row = stats.pass_rate(v, confidence=confidence).row(0, named=True)
    assert (row["n"], row["passes"]) == (n, passes)
    assert row["rate"] == pytest.approx(passes / n, abs=EXACT)
    assert row["se"] == pytest.approx(math.sqrt(passes / n * (1 - passes / n) / n), abs=EXACT)
    assert row["ci_low"] == pytest.approx(low, abs=EXACT) and row["ci_high"] == pytest.approx(high, abs=EXACT)


def test_wilson_interval_n0() -> None:
    assert stats.wilson_interval(0, 0) is None


def test_pass_rate_by_slice_excludes_errors_and_unscored() -> None:
    outcomes = {
        "r": [["pass"], ["pass"], ["fail"], ["error"], ["not_scored"], ["pass"], ["fail"], ["fail"], ["pass"]]
    }
    v = verdicts_from(outcomes)
    overall = stats.pass_rate(v).row(0, named=True)
    assert overall["group"] == "all"
    assert (overall["n"], overall["passes"], overall["errors"], overall["not_scored"]) == (7, 4, 1, 1)
    by = stats.pass_rate(v, by="slice")
    assert by.columns == [
        "group",
        "slice",
        "n",
        "passes",
        "rate",
        "se",
        "ci_low",
        "ci_high",
        "errors",
        "not_scored",
    ]
    assert by.get_column("group").to_list() == ["s0", "s1", "s2"]
    for row in by.iter_rows(named=True):
        sub = v.filter(pl.col("slice") == row["slice"])
        scored = sub.filter(pl.col("status").is_in(["pass", "fail"]))
        n, x = scored.height, int(scored.get_column("passed").sum())
        assert (row["n"], row["passes"]) == (n, x)
        low, high = proportion_confint(x, n, method="wilson")
        assert row["ci_low"] == pytest.approx(low, abs=EXACT) and row["ci_high"] == pytest.approx(
            high, abs=EXACT
        )
    assert by.get_column("errors").sum() == 1 and by.get_column("not_scored").sum() == 1


def test_pass_rate_per_tier_on_check_rows() -> None:
    rows = rows_frame(
        [check_row(tier="exact", status=s) for s in ["pass", "pass", "fail", "error"]]
        + [check_row(tier="judge", status=s) for s in ["pass", "fail", "fail", "skipped", "skipped"]]
    )
    out = {r["tier"]: r for r in stats.pass_rate(rows, by="tier").iter_rows(named=True)}
    assert (out["exact"]["n"], out["exact"]["passes"], out["exact"]["errors"]) == (3, 2, 1)
    assert (out["judge"]["n"], out["judge"]["passes"], out["judge"]["not_scored"]) == (3, 1, 2)
    low, high = proportion_confint(1, 3, method="wilson")
    assert out["judge"]["ci_low"] == pytest.approx(low, abs=EXACT)
    assert out["judge"]["ci_high"] == pytest.approx(high, abs=EXACT)


def test_pass_rate_multiple_keys_label() -> None:
    v = verdicts_from({"a": [["pass"], ["fail"]], "b": [["pass"], ["pass"]]})
    out = stats.pass_rate(v, by=["run_id", "split"])
    assert out.get_column("group").to_list() == ["a/dev", "a/holdout", "b/dev", "b/holdout"]


def test_pass_rate_n0() -> None:
    empty = stats.pass_rate(verdicts_from({}))
    assert empty.height == 1
    row = empty.row(0, named=True)
    assert row["n"] == 0 and row["rate"] is None and row["ci_low"] is None and row["se"] is None
    only_errors = stats.pass_rate(verdicts_from({"r": [["error"], ["not_scored"]]})).row(0, named=True)
    assert (only_errors["n"], only_errors["errors"], only_errors["not_scored"]) == (0, 1, 1)
    assert only_errors["rate"] is None


@pytest.mark.parametrize(("status", "rate"), [("pass", 1.0), ("fail", 0.0)])
def test_pass_rate_all_pass_all_fail(status: str, rate: float) -> None:
    row = stats.pass_rate(verdicts_from({"r": [[status]] * 20})).row(0, named=True)
    low, high = proportion_confint(int(rate * 20), 20, method="wilson")
    assert row["rate"] == rate and row["se"] == 0.0
    assert row["ci_low"] == pytest.approx(low, abs=EXACT) and row["ci_high"] == pytest.approx(high, abs=EXACT)
    assert 0.0 <= row["ci_low"] <= row["rate"] <= row["ci_high"] <= 1.0
    assert (row["ci_high"] if status == "pass" else row["ci_low"]) == rate


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["pass", "fail", "error", "not_scored"]), min_size=0, max_size=80))
def test_pass_rate_properties(statuses: list[str]) -> None:
    row = stats.pass_rate(verdicts_from({"r": [[s] for s in statuses]})).row(0, named=True)
    n = statuses.count("pass") + statuses.count("fail")
    assert row["n"] == n
    if n == 0:
        assert row["rate"] is None
        return
    assert 0.0 <= row["ci_low"] <= row["rate"] <= row["ci_high"] <= 1.0
    low, high = proportion_confint(statuses.count("pass"), n, method="wilson")
    assert row["ci_low"] == pytest.approx(low, abs=EXACT) and row["ci_high"] == pytest.approx(high, abs=EXACT)


# ---------------------------------------------------------------------------------------------------------
# 3. Repeats: clustered SE, flip rate, noise floor


def ols_cluster_se(y: np.ndarray, groups: np.ndarray, correction: bool) -> float:
    fit = sm.OLS(y, np.ones(len(y))).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": correction}
    )
    return float(fit.bse[0])


def flatten(v: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    scored = v.filter(pl.col("status").is_in(["pass", "fail"]))
    y = scored.get_column("passed").cast(pl.Float64).to_numpy()
    groups = scored.get_column("case_id").rank("dense").cast(pl.Int64).to_numpy()
    return y, groups


def test_clustered_se_matches_statsmodels_unequal_clusters() -> None:
    rng = np.random.default_rng(7)
    p = rng.beta(1.5, 1.0, 60)
    cases = [["pass" if rng.random() < pi else "fail" for _ in range(rng.integers(1, 7))] for pi in p]
    v = verdicts_from({"r": cases})
    row = stats.clustered_pass_rate(v).row(0, named=True)
    y, groups = flatten(v)
    assert row["n"] == len(y) and row["n_cases"] == 60
    assert row["rate"] == pytest.approx(y.mean(), abs=EXACT)
    # evalkit reports statsmodels' default (CR1, factor G/(G-1)); Miller's raw form drops the factor.
    assert row["se"] == pytest.approx(ols_cluster_se(y, groups, correction=True), abs=EXACT)
    raw = row["se"] * math.sqrt((row["n_cases"] - 1) / row["n_cases"])
    assert raw == pytest.approx(ols_cluster_se(y, groups, correction=False), abs=EXACT)
    assert row["se_binomial"] == pytest.approx(math.sqrt(y.mean() * (1 - y.mean()) / len(y)), abs=EXACT)
    assert row["design_effect"] == pytest.approx((row["se"] / row["se_binomial"]) ** 2, rel=1e-12)


def test_clustered_se_equal_repeats_is_sd_of_case_means() -> None:
    v = paired_verdicts(seed=3, n=80, k=4).filter(pl.col("run_id") == "A")
    row = stats.clustered_pass_rate(v).row(0, named=True)
    means = case_means(v, "A")
    expected = means.std(ddof=1) / math.sqrt(len(means))
    assert row["se"] == pytest.approx(expected, abs=EXACT)
    assert row["se_case_means"] == pytest.approx(expected, abs=EXACT)
    assert row["case_mean"] == pytest.approx(means.mean(), abs=EXACT)
    assert row["rate"] == pytest.approx(means.mean(), abs=EXACT)


def test_clustered_interval_is_wilson_at_effective_n() -> None:
    v = paired_verdicts(seed=4, n=50, k=3).filter(pl.col("run_id") == "B")
    row = stats.clustered_pass_rate(v, confidence=0.9).row(0, named=True)
    p, se = row["rate"], row["se"]
    n_eff = p * (1 - p) / se**2
    # statsmodels' Wilson formula takes a fractional nobs: count = p * n_eff.
    low, high = proportion_confint(p * n_eff, n_eff, alpha=0.1, method="wilson")
    assert row["ci_low"] == pytest.approx(low, abs=EXACT) and row["ci_high"] == pytest.approx(high, abs=EXACT)


def test_clustered_by_group_and_edges() -> None:
    v = verdicts_from({"a": [["pass", "pass"], ["fail", "pass"], ["fail", "fail"]], "b": [["pass", "pass"]]})
    out = {r["run_id"]: r for r in stats.clustered_pass_rate(v, by="run_id").iter_rows(named=True)}
    y, groups = flatten(v.filter(pl.col("run_id") == "a"))
    assert out["a"]["se"] == pytest.approx(ols_cluster_se(y, groups, correction=True), abs=EXACT)
    # A single case has no between-case spread to measure: no SE, and the interval is Wilson's at n = 1.
    assert out["b"]["n_cases"] == 1 and out["b"]["se"] is None
    assert out["b"]["ci_low"] == pytest.approx(proportion_confint(1, 1, method="wilson")[0], abs=EXACT)
    all_pass = stats.clustered_pass_rate(verdicts_from({"r": [["pass"] * 3] * 10})).row(0, named=True)
    low, _ = proportion_confint(10, 10, method="wilson")
    assert all_pass["se"] == 0.0 and all_pass["ci_low"] == pytest.approx(low, abs=EXACT)
    assert all_pass["ci_high"] == 1.0
    empty = stats.clustered_pass_rate(verdicts_from({})).row(0, named=True)
    assert empty["n"] == 0 and empty["rate"] is None and empty["se"] is None


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["pass", "fail", "error"]), min_size=1, max_size=5), min_size=2, max_size=25
    )
)
def test_clustered_se_property_matches_statsmodels(cases: list[list[str]]) -> None:
    v = verdicts_from({"r": cases})
    row = stats.clustered_pass_rate(v).row(0, named=True)
    y, groups = flatten(v)
    if row["n_cases"] < 2:
        assert row["se"] is None
        return
    assert row["se"] == pytest.approx(ols_cluster_se(y, groups, correction=True), abs=EXACT)
    if row["ci_low"] is not None:
        assert 0.0 <= row["ci_low"] <= row["rate"] <= row["ci_high"] <= 1.0


def test_flip_rate_is_share_of_disagreeing_pairs() -> None:
    cases = [
        ["pass", "pass", "pass"],
        ["pass", "fail"],
        ["pass", "fail", "fail", "pass", "pass"],
        ["fail", "error", "fail", "pass"],
        ["pass"],
        ["error", "not_scored"],
    ]
    out = stats.flip_rates(verdicts_from({"r": cases})).sort("case_id")
    for statuses, row in zip(cases, out.iter_rows(named=True), strict=True):
        scored = [s == "pass" for s in statuses if s in ("pass", "fail")]
        assert row["k"] == len(scored)
        if len(scored) < 2:
            assert row["flip_rate"] is None and row["within_var"] is None
            continue
        pairs = list(itertools.combinations(scored, 2))
        assert row["flip_rate"] == pytest.approx(sum(a != b for a, b in pairs) / len(pairs), abs=EXACT)
        assert row["within_var"] == pytest.approx(np.var(np.array(scored, float), ddof=1), abs=EXACT)
        assert row["flip_rate"] == pytest.approx(2 * row["within_var"], abs=EXACT)
    assert out.row(4, named=True)["mean"] == 1.0 and out.row(5, named=True)["mean"] is None


def test_noise_floor_matches_numpy() -> None:
    v = paired_verdicts(seed=11, n=120, k=5)
    out = {r["run_id"]: r for r in stats.noise_floor(v).iter_rows(named=True)}
    for run in ("A", "B"):
        sub = v.filter(pl.col("run_id") == run)
        outcomes = (
            sub.sort("case_id", "repeat").get_column("passed").cast(pl.Float64).to_numpy().reshape(120, 5)
        )
        per_repeat = outcomes.mean(axis=0)
        sigma2 = outcomes.var(axis=1, ddof=1).mean()
        row = out[run]
        assert row["repeats"] == 5 and row["n_cases"] == 120
        assert row["sd_repeat_rates"] == pytest.approx(per_repeat.std(ddof=1), abs=EXACT)
        assert row["sigma2"] == pytest.approx(sigma2, abs=EXACT)
        assert row["sd_expected"] == pytest.approx(math.sqrt(sigma2 / 120), abs=EXACT)
        assert row["mean_flip_rate"] == pytest.approx(2 * sigma2, abs=EXACT)
        p = outcomes.mean(axis=1)
        assert row["flaky_cases"] == int(((p > 0) & (p < 1)).sum())


def test_noise_floor_single_repeat() -> None:
    row = stats.noise_floor(verdicts_from({"r": [["pass"], ["fail"]]})).row(0, named=True)
    assert row["repeats"] == 1 and row["sd_repeat_rates"] is None
    assert row["sigma2"] is None and row["sd_expected"] is None
