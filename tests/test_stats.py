"""evalkit.stats._stats against scipy / statsmodels / numpy on the same numbers."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.power import NormalIndPower, zt_ind_solve_power
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from evalkit.stats import _stats as stats

EXACT = 1e-9
Z975 = float(sps.norm.ppf(0.975))


# ---------------------------------------------------------------------------------------------------------
# Builders


def check_row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run_id": "r1",
        "case_id": "c1",
        "slice": "s",
        "split": "dev",
        "repeat": 0,
        "check_kind": "exact",
        "tier": "exact",
        "status": "pass",
        "cost_usd": 0.01,
        "judge_cost_usd": None,
        "latency_s": 1.0,
        "judge_latency_s": None,
    }
    row.update(overrides)
    if "passed" not in overrides:
        row["passed"] = {"pass": True, "fail": False}.get(row["status"])
    return row


ROW_SCHEMA = {
    "run_id": pl.String,
    "case_id": pl.String,
    "slice": pl.String,
    "split": pl.String,
    "repeat": pl.Int64,
    "check_kind": pl.String,
    "tier": pl.String,
    "status": pl.String,
    "cost_usd": pl.Float64,
    "judge_cost_usd": pl.Float64,
    "latency_s": pl.Float64,
    "judge_latency_s": pl.Float64,
    "passed": pl.Boolean,
}


def rows_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=ROW_SCHEMA)


def verdicts_from(outcomes: dict[str, list[list[str]]], slices: dict[str, str] | None = None) -> pl.DataFrame:
    """Verdict-level frame: run -> per case a list of repeat statuses."""
    records = []
    for run, cases in outcomes.items():
        for i, repeats in enumerate(cases):
            case = f"c{i:04d}"
            for r, status in enumerate(repeats):
                records.append(
                    {
                        "run_id": run,
                        "case_id": case,
                        "slice": (slices or {}).get(case, f"s{i % 3}"),
                        "split": "holdout" if i % 5 == 0 else "dev",
                        "repeat": r,
                        "status": status,
                        "passed": {"pass": True, "fail": False}.get(status),
                    }
                )
    schema = {
        "run_id": pl.String,
        "case_id": pl.String,
        "slice": pl.String,
        "split": pl.String,
        "repeat": pl.Int64,
        "status": pl.String,
        "passed": pl.Boolean,
    }
    return pl.DataFrame(records, schema=schema)


def bernoulli_statuses(rng: np.random.Generator, p: np.ndarray, k: int) -> list[list[str]]:
    draws = rng.random((len(p), k)) < p[:, None]
    return [["pass" if d else "fail" for d in case] for case in draws]


def paired_verdicts(seed: int, n: int, k: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.beta(2.0, 2.0, n)
    better = np.clip(base + rng.normal(0.05, 0.15, n), 0.0, 1.0)
    return verdicts_from({"A": bernoulli_statuses(rng, base, k), "B": bernoulli_statuses(rng, better, k)})


def case_means(v: pl.DataFrame, run: str) -> np.ndarray:
    m = (
        v.filter(pl.col("run_id") == run)
        .group_by("case_id")
        .agg(pl.col("passed").cast(pl.Float64).mean())
        .sort("case_id")
    )
    return m.get_column("passed").to_numpy()


# ---------------------------------------------------------------------------------------------------------
# 1. Case verdicts


def test_case_verdict_status_precedence_and_passed() -> None:
    rows = rows_frame(
        [
            check_row(case_id="err", status="error", passed=None),
            check_row(case_id="err", status="fail"),
            check_row(case_id="err", status="pass"),
            check_row(case_id="fail", status="fail"),
            check_row(case_id="fail", status="pass"),
            check_row(case_id="fail", tier="judge", status="skipped", passed=None),
            check_row(case_id="pass", status="pass"),
            check_row(case_id="pass", tier="judge", status="skipped", passed=None),
            check_row(case_id="none", tier="judge", status="skipped", passed=None),
        ]
    )
    v = stats.case_verdicts(rows)
    got = {r["case_id"]: (r["status"], r["passed"]) for r in v.iter_rows(named=True)}
    assert got == {
        "err": ("error", None),
        "fail": ("fail", False),
        "pass": ("pass", True),
        "none": ("not_scored", None),
    }
    assert v.select("n_checks", "n_pass", "n_fail", "n_error", "n_skipped").sum().row(0) == (9, 3, 2, 1, 3)


NOT_JUDGED = "not judged: no judge available"
CHEAPER_FAILED = "cheaper check failed: exact"


def test_case_verdict_not_judged_is_not_a_pass() -> None:
    def judge(status: str, reason: str | None = None) -> dict[str, Any]:
        return {"tier": "judge", "status": status, "skipped_reason": reason}

    cases: dict[str, list[dict[str, Any]]] = {
        "pass+unjudged": [{"status": "pass"}, judge("skipped", NOT_JUDGED)],
        "fail+unjudged": [{"status": "fail"}, judge("skipped", CHEAPER_FAILED)],
        "fail+nokey": [{"status": "fail"}, judge("skipped", NOT_JUDGED)],
        "error+unjudged": [{"status": "error"}, judge("skipped", NOT_JUDGED)],
        "pass+judged": [{"status": "pass"}, judge("pass")],
        "only-unjudged": [judge("skipped", NOT_JUDGED)],
    }
    rows = rows_frame(
        [
            check_row(case_id=case, **{k: v for k, v in c.items() if k != "skipped_reason"})
            for case, cs in cases.items()
            for c in cs
        ]
    ).with_columns(
        pl.Series("skipped_reason", [c.get("skipped_reason") for cs in cases.values() for c in cs])
    )
    got = {r["case_id"]: r["status"] for r in stats.case_verdicts(rows).iter_rows(named=True)}
    assert got == {
        "pass+unjudged": "not_scored",
        "fail+unjudged": "fail",
        "fail+nokey": "fail",
        "error+unjudged": "error",
        "pass+judged": "pass",
        "only-unjudged": "not_scored",
    }
    # The same rule as the results module's per-case status.
    results = pytest.importorskip("evalkit.results")
    for case, checks in cases.items():
        objs = [
            results.CheckResult(
                index=i,
                kind="k",
                name="k",
                tier=c.get("tier", "exact"),
                status=c["status"],
                skipped_reason=c.get("skipped_reason"),
            )
            for i, c in enumerate(checks)
        ]
        assert results.case_status(objs) == got[case], case
    # Without skipped_reason every skip is deliberate.
    assert (
        stats.case_verdicts(rows.drop("skipped_reason"))
        .filter(pl.col("case_id") == "pass+unjudged")["status"]
        .item()
        == "pass"
    )


def test_case_verdicts_one_row_per_run_case_repeat() -> None:
    rows = rows_frame(
        [
            check_row(run_id=run, case_id=case, repeat=rep, check_kind=kind, slice="billing", split="holdout")
            for run in ("a", "b")
            for case in ("c1", "c2")
            for rep in (0, 1, 2)
            for kind in ("exact", "regex")
        ]
    )
    v = stats.case_verdicts(rows)
    assert v.height == 2 * 2 * 3
    assert v.select("run_id", "case_id", "repeat").is_duplicated().sum() == 0
    assert set(v.get_column("slice")) == {"billing"} and set(v.get_column("split")) == {"holdout"}


def test_case_verdict_costs_and_latency() -> None:
    rows = rows_frame(
        [
            # System cost repeats on each check row; judge cost sums over judged checks.
            check_row(case_id="known", cost_usd=0.02, latency_s=1.5),
            check_row(
                case_id="known",
                cost_usd=0.02,
                latency_s=1.5,
                tier="judge",
                judge_cost_usd=0.003,
                judge_latency_s=2.0,
            ),
            check_row(
                case_id="known",
                cost_usd=0.02,
                latency_s=1.5,
                tier="judge",
                judge_cost_usd=0.004,
                judge_latency_s=3.0,
            ),
            # A skipped judge was not run: its null cost is no cost, not an unknown one.
            check_row(case_id="skip", cost_usd=0.01, status="fail"),
            check_row(case_id="skip", cost_usd=0.01, tier="judge", status="skipped", passed=None),
            # Unknown system cost.
            check_row(case_id="sys?", cost_usd=None),
            check_row(case_id="sys?", cost_usd=None, tier="judge", judge_cost_usd=0.002),
            # A judge that ran without a recorded cost.
            check_row(
                case_id="judge?", cost_usd=0.01, tier="judge", judge_cost_usd=None, judge_latency_s=1.0
            ),
        ]
    )
    v = stats.case_verdicts(rows)
    got = {r["case_id"]: r for r in v.iter_rows(named=True)}
    known = got["known"]
    assert known["system_cost_usd"] == pytest.approx(0.02, abs=1e-15)
    assert known["judge_cost_usd"] == pytest.approx(0.007, abs=1e-15)
    assert known["cost_usd"] == pytest.approx(0.027, abs=1e-15)
    assert known["latency_s"] == 1.5 and known["judge_latency_s"] == pytest.approx(5.0)
    assert got["skip"]["cost_usd"] == pytest.approx(0.01) and got["skip"]["judge_cost_usd"] == 0.0
    assert got["sys?"]["system_cost_usd"] is None and got["sys?"]["cost_usd"] is None
    assert got["sys?"]["judge_cost_usd"] == pytest.approx(0.002)
    assert got["judge?"]["judge_cost_usd"] is None and got["judge?"]["cost_usd"] is None
    assert got["judge?"]["system_cost_usd"] == pytest.approx(0.01)


def test_case_verdicts_rejects_unknown_status_and_missing_columns() -> None:
    with pytest.raises(ValueError, match="unknown status"):
        stats.case_verdicts(rows_frame([check_row(status="passed")]))
    with pytest.raises(ValueError, match="missing columns"):
        stats.case_verdicts(rows_frame([check_row()]).drop("tier"))


def test_case_verdicts_empty() -> None:
    v = stats.case_verdicts(rows_frame([]))
    assert v.height == 0 and "status" in v.columns


# ---------------------------------------------------------------------------------------------------------
# 2. Pass rate and the Wilson interval


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize(
    ("passes", "n"), [(0, 1), (1, 1), (0, 10), (10, 10), (3, 10), (7, 13), (1, 1000), (500, 1000)]
)
def test_wilson_interval_matches_statsmodels(passes: int, n: int, confidence: float) -> None:
    low, high = proportion_confint(passes, n, alpha=1 - confidence, method="wilson")
    got = stats.wilson_interval(passes, n, confidence)
    assert got[0] == pytest.approx(max(low, 0.0), abs=EXACT)
    assert got[1] == pytest.approx(min(high, 1.0), abs=EXACT)
    v = verdicts_from({"r": [["pass"]] * passes + [["fail"]] * (n - passes)})
    row = stats.pass_rate(v, confidence=confidence).row(0, named=True)
    assert (row["n"], row["passes"]) == (n, passes)
    assert row["rate"] == pytest.approx(passes / n, abs=EXACT)
    assert row["se"] == pytest.approx(math.sqrt(passes / n * (1 - passes / n) / n), abs=EXACT)
    assert row["ci_low"] == pytest.approx(low, abs=EXACT) and row["ci_high"] == pytest.approx(high, abs=EXACT)


def test_wilson_interval_n0() -> None:
    assert all(math.isnan(x) for x in stats.wilson_interval(0, 0))


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


# ---------------------------------------------------------------------------------------------------------
# 4. Paired comparison


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
    assert c.n == 1 and c.diff == -1.0 and math.isnan(c.se) and math.isnan(c.ci_low)
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


# ---------------------------------------------------------------------------------------------------------
# 5. Minimum detectable effect


def test_mde_hand_computation() -> None:
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    got = stats.minimum_detectable_effect(200, 0.05, 0.2, 0.15, 3, 5)
    assert got == pytest.approx(z * math.sqrt((0.05 + 0.2 / 3 + 0.15 / 5) / 200), abs=EXACT)
    z90 = sps.norm.ppf(0.995) + sps.norm.ppf(0.9)
    got = stats.minimum_detectable_effect(50, 0.1, alpha=0.01, power=0.9)
    assert got == pytest.approx(z90 * math.sqrt(0.1 / 50), abs=EXACT)
    assert stats.minimum_detectable_effect(0, 0.1) == math.inf


def test_mde_matches_statsmodels_power() -> None:
    n, omega2, s2, k = 300, 0.04, 0.18, 4
    sd = math.sqrt(omega2 + 2 * s2 / k)
    mde = stats.minimum_detectable_effect(n, omega2, s2, s2, k, k)
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
        n = stats.cases_needed(effect, omega2, s2, s2, k, k)
        assert stats.minimum_detectable_effect(n, omega2, s2, s2, k, k) <= effect
        assert stats.minimum_detectable_effect(n - 1, omega2, s2, s2, k, k) > effect
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


# ---------------------------------------------------------------------------------------------------------
# 6. Cost and latency


def test_cost_latency_matches_numpy_percentiles() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for run in ("a", "b"):
        for case in range(40):
            for rep in range(2):
                cost: float | None = None if (run == "a" and case == 3) else float(rng.gamma(2, 0.01))
                latency = float(rng.lognormal(0, 0.6))
                rows.append(
                    check_row(run_id=run, case_id=f"c{case}", repeat=rep, cost_usd=cost, latency_s=latency)
                )
                skipped = rng.random() < 0.2
                rows.append(
                    check_row(
                        run_id=run,
                        case_id=f"c{case}",
                        repeat=rep,
                        cost_usd=cost,
                        latency_s=latency,
                        tier="judge",
                        status="skipped" if skipped else "pass",
                        passed=None if skipped else True,
                        judge_cost_usd=None if skipped else float(rng.gamma(2, 0.005)),
                        judge_latency_s=None if skipped else float(rng.lognormal(1, 0.3)),
                    )
                )
    frame = rows_frame(rows)
    out = stats.cost_latency(frame)
    v = stats.case_verdicts(frame)
    for row in out.by_run.iter_rows(named=True):
        sub = v.filter(pl.col("run_id") == row["run_id"])
        lat = sub.get_column("latency_s").to_numpy()
        total_lat = lat + sub.get_column("judge_latency_s").to_numpy()
        assert row["latency_p50_s"] == pytest.approx(np.percentile(lat, 50, method="linear"), abs=EXACT)
        assert row["latency_p95_s"] == pytest.approx(np.percentile(lat, 95, method="linear"), abs=EXACT)
        assert row["total_latency_p95_s"] == pytest.approx(np.percentile(total_lat, 95), abs=EXACT)
        known = sub.get_column("cost_usd").drop_nulls().to_numpy()
        assert row["tasks"] == 80 and row["cost_unknown_tasks"] == (2 if row["run_id"] == "a" else 0)
        assert row["cost_per_task_usd"] == pytest.approx(known.mean(), abs=EXACT)
        judge = sub.filter(pl.col("cost_usd").is_not_null()).get_column("judge_cost_usd").to_numpy()
        assert row["judge_share"] == pytest.approx(judge.sum() / known.sum(), abs=EXACT)
    for row in out.by_tier.iter_rows(named=True):
        sub = frame.filter((pl.col("run_id") == row["run_id"]) & (pl.col("tier") == row["tier"]))
        if row["tier"] == "exact":
            assert row["judge_cost_usd"] == 0.0 and row["judge_latency_p50_s"] is None
            continue
        jl = sub.get_column("judge_latency_s").drop_nulls().to_numpy()
        jc = sub.get_column("judge_cost_usd").drop_nulls().to_numpy()
        assert row["checks"] == 80 and row["checks_run"] == len(jl)
        assert row["judge_latency_p50_s"] == pytest.approx(np.percentile(jl, 50), abs=EXACT)
        assert row["judge_latency_p95_s"] == pytest.approx(np.percentile(jl, 95), abs=EXACT)
        assert row["judge_cost_per_check_usd"] == pytest.approx(jc.mean(), abs=EXACT)
        assert row["judge_cost_per_task_usd"] == pytest.approx(jc.sum() / 80, abs=EXACT)


# ---------------------------------------------------------------------------------------------------------
# 7. Dev vs holdout


def split_frame(dev: tuple[int, int], holdout: tuple[int, int], run: str = "r") -> pl.DataFrame:
    """(passes, n) per split, one scored row per case."""
    records = []
    for split, (x, n) in (("dev", dev), ("holdout", holdout)):
        for i in range(n):
            status = "pass" if i < x else "fail"
            records.append(
                {"run_id": run, "case_id": f"{split}-{i}", "split": split, "status": status, "slice": "s"}
            )
    return pl.DataFrame(records)


@pytest.mark.parametrize(
    ("dev", "holdout", "warn"), [((90, 100), (30, 50), True), ((60, 100), (28, 50), False)]
)
def test_dev_vs_holdout_two_independent_proportions(
    dev: tuple[int, int], holdout: tuple[int, int], warn: bool
) -> None:
    row = stats.dev_vs_holdout(split_frame(dev, holdout)).row(0, named=True)
    low, high = confint_proportions_2indep(*dev, *holdout, method="wald", compare="diff")
    assert row["diff"] == pytest.approx(dev[0] / dev[1] - holdout[0] / holdout[1], abs=EXACT)
    assert row["diff_ci_low"] == pytest.approx(low, abs=EXACT)
    assert row["diff_ci_high"] == pytest.approx(high, abs=EXACT)
    assert row["warning"] is warn
    for split, (x, n) in (("dev", dev), ("holdout", holdout)):
        wl, wh = proportion_confint(x, n, method="wilson")
        assert row[f"n_{split}"] == n
        assert row[f"ci_low_{split}"] == pytest.approx(wl, abs=EXACT)
        assert row[f"ci_high_{split}"] == pytest.approx(wh, abs=EXACT)


def test_dev_vs_holdout_holdout_better_is_no_warning() -> None:
    row = stats.dev_vs_holdout(split_frame((10, 100), (45, 50))).row(0, named=True)
    assert row["diff"] < 0 and row["warning"] is False


def test_dev_vs_holdout_clusters_repeats_and_groups() -> None:
    v = paired_verdicts(seed=8, n=100, k=3)
    out = stats.dev_vs_holdout(v, by="run_id")
    assert out.get_column("group").to_list() == ["A", "B"]
    clustered = stats.clustered_pass_rate(v, by=["run_id", "split"])
    for row in out.iter_rows(named=True):
        for split in ("dev", "holdout"):
            ref = clustered.filter((pl.col("run_id") == row["run_id"]) & (pl.col("split") == split)).row(
                0, named=True
            )
            assert row[f"se_{split}"] == pytest.approx(ref["se"], abs=EXACT)
            assert row[f"ci_low_{split}"] == pytest.approx(ref["ci_low"], abs=EXACT)
        assert row["se_diff"] == pytest.approx(math.hypot(row["se_dev"], row["se_holdout"]), abs=EXACT)


def test_dev_vs_holdout_missing_split() -> None:
    row = stats.dev_vs_holdout(split_frame((5, 10), (0, 0))).row(0, named=True)
    assert row["n_dev"] == 10 and row["n_holdout"] == 0
    assert row["diff"] is None and row["warning"] is False
    empty = stats.dev_vs_holdout(verdicts_from({})).row(0, named=True)
    assert empty["n_dev"] == 0 and empty["warning"] is False


# ---------------------------------------------------------------------------------------------------------
# Distribution helpers


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
