"""Cost and latency percentiles against numpy; dev against holdout against statsmodels."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from stats_testdata import (
    EXACT,
    check_row,
    paired_verdicts,
    rows_frame,
    verdicts_from,
)
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

import evalkit.stats as stats


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
    low, high = confint_proportions_2indep(*dev, *holdout, method="newcomb", compare="diff")
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
