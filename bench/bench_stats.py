"""Time every statistic in evalkit.stats on 1,000,000 synthetic check-level rows.

Two runs x 50,000 cases x 2 repeats x 5 checks. Run with ``python bench/bench_stats.py``; it prints each
statistic's wall time and the total as a share of the 5 s budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

import evalkit.stats as stats

BUDGET_S = 5.0
RUNS = ("baseline", "candidate")
CASES = 50_000
REPEATS = 2
TIERS = ("exact", "exact", "code", "code", "judge")


def synthetic_rows(seed: int = 0) -> pl.DataFrame:
    """Check-level rows following the results schema, with realistic noise and correlation."""
    rng = np.random.default_rng(seed)
    checks = len(TIERS)
    n = len(RUNS) * CASES * REPEATS * checks
    idx = np.arange(n)
    run = idx // (CASES * REPEATS * checks)
    case = (idx // (REPEATS * checks)) % CASES
    repeat = (idx // checks) % REPEATS
    check = idx % checks

    # A latent difficulty per case, shared by both runs (that is what pairing exploits); the candidate is
    # slightly better, and each (run, case, repeat) has its own sampling noise.
    skill = rng.normal(0.0, 1.5, CASES)
    lift = np.array([0.0, 0.15])
    task_noise = rng.normal(0.0, 0.7, len(RUNS) * CASES * REPEATS)
    task = idx // checks
    logit = 2.0 + skill[case] + lift[run] + task_noise[task]
    p_check = 1.0 / (1.0 + np.exp(-logit))
    u = rng.random(n)
    status = np.where(u < p_check, "pass", "fail").astype(object)
    status[rng.random(n) < 0.01] = "error"
    is_judge = check == checks - 1
    status[is_judge & (rng.random(n) < 0.05)] = "skipped"
    judged = is_judge & (status != "skipped")

    system_cost = rng.gamma(2.0, 0.0015, len(RUNS) * CASES * REPEATS)[task]
    system_latency = rng.lognormal(0.0, 0.5, len(RUNS) * CASES * REPEATS)[task]
    judge_cost = np.where(judged, rng.gamma(2.0, 0.004, n), np.nan)
    judge_latency = np.where(judged, rng.lognormal(0.5, 0.4, n), np.nan)

    frame = pl.DataFrame(
        {
            "run_id": np.array(RUNS)[run],
            "case": case,
            "repeat": repeat,
            "check": check,
            "tier": np.array(TIERS)[check],
            "status": status.astype(str),
            "cost_usd": system_cost,
            "judge_cost_usd": judge_cost,
            "latency_s": system_latency,
            "judge_latency_s": judge_latency,
        }
    )
    return frame.with_columns(
        pl.format("case-{}", pl.col("case")).alias("case_id"),
        pl.format("slice-{}", pl.col("case") % 8).alias("slice"),
        pl.when(pl.col("case") % 5 == 0).then(pl.lit("holdout")).otherwise(pl.lit("dev")).alias("split"),
        pl.format("check-{}", pl.col("check")).alias("check_kind"),
        pl.when(pl.col("status").is_in(["pass", "fail"])).then(pl.col("status") == "pass").alias("passed"),
        pl.col("judge_cost_usd").fill_nan(None),
        pl.col("judge_latency_s").fill_nan(None),
    ).drop("case", "check")


def timed(name: str, fn: Callable[[], Any], results: list[tuple[str, float]]) -> Any:
    start = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - start
    results.append((name, elapsed))
    print(f"{name:<44} {elapsed:7.3f} s")
    return value


def main() -> None:
    start = time.perf_counter()
    rows = synthetic_rows()
    print(f"built {rows.height:,} check rows in {time.perf_counter() - start:.2f} s (not counted)\n")
    a, b = RUNS
    results: list[tuple[str, float]] = []
    verdicts = timed("case_verdicts", lambda: stats.case_verdicts(rows), results)
    timed("pass_rate (overall, by run)", lambda: stats.pass_rate(verdicts, by="run_id"), results)
    timed("pass_rate (by run x slice)", lambda: stats.pass_rate(verdicts, by=["run_id", "slice"]), results)
    timed(
        "pass_rate (check rows, by run x tier)", lambda: stats.pass_rate(rows, by=["run_id", "tier"]), results
    )
    timed("clustered_pass_rate (by run)", lambda: stats.clustered_pass_rate(verdicts, by="run_id"), results)
    timed("flip_rates", lambda: stats.flip_rates(verdicts), results)
    timed("noise_floor", lambda: stats.noise_floor(verdicts), results)
    comparison = timed("compare_runs", lambda: stats.compare_runs(verdicts, a, b), results)
    plan = timed("estimate_mde (paired)", lambda: stats.estimate_mde(verdicts, a, b), results)
    timed("estimate_mde (unpaired)", lambda: stats.estimate_mde(verdicts, a), results)
    timed(
        "cases_needed",
        lambda: stats.cases_needed(0.01, plan.omega2, s2_a=plan.s2_a, s2_b=plan.s2_b, k_a=2, k_b=2),
        results,
    )
    timed("cost_latency (from check rows)", lambda: stats.cost_latency(rows), results)
    timed("dev_vs_holdout (by run)", lambda: stats.dev_vs_holdout(verdicts, by="run_id"), results)

    total = sum(t for _, t in results)
    print(f"\ntotal {total:.2f} s = {total / BUDGET_S:.2f} x budget ({BUDGET_S:g} s)")
    print(
        f"\n(sanity) diff {comparison.diff:+.4f} +/- {comparison.se:.4f}, "
        f"discordant {comparison.discordant}, McNemar p {comparison.mcnemar_exact_p:.3g}, MDE {plan.mde:.4f}"
    )


if __name__ == "__main__":
    main()
