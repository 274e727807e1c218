"""Cost and latency per run and per tier, the judge's spend split out."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from evalkit._results import NOT_RUN_STATUSES
from evalkit.stats._frames import Q_METHOD, count_of, require_check_rows
from evalkit.stats._verdicts import case_verdicts


@dataclass(frozen=True, eq=False)
class CostLatency:
    """Cost and latency per run (system) and per (run, tier).

    ``by_run``: one row per run_id over its tasks (case x repeat): mean cost per task (system + judge, and
    each part, over tasks whose cost is known), totals of known costs, the judge share of the known total,
    the count of tasks with unknown cost, and p50/p95 of system latency and of system + judge latency.
    ``by_tier``: one row per (run_id, tier) over check rows: checks, checks run (not skipped), judge spend,
    judge spend per task and per run check, and p50/p95 of judge latency (null for tiers with no judge).
    Percentiles: linear interpolation, as ``numpy.percentile`` by default.
    """

    by_run: pl.DataFrame
    by_tier: pl.DataFrame


def cost_latency(rows: pl.DataFrame) -> CostLatency:
    """Cost per task and p50/p95 latency per run and per tier, judge spend split out.

    Parameters
    ----------
    rows:
        Check rows (one per case, repeat and check), as :func:`evalkit._results.read_run` returns them.

    Returns
    -------
    A :class:`CostLatency` with ``by_run`` and ``by_tier`` frames.

    >>> import polars as pl
    >>> rows = pl.DataFrame({
    ...     "run_id": ["r"] * 2, "case_id": ["a", "b"], "slice": ["s"] * 2, "split": ["dev"] * 2,
    ...     "repeat": [0, 0], "check_index": [0, 0], "tier": ["exact"] * 2, "status": ["pass", "fail"],
    ...     "cost_usd": [0.01, 0.03], "judge_cost_usd": [None, None], "latency_s": [1.0, 3.0],
    ...     "judge_latency_s": [None, None],
    ... }, schema_overrides={"judge_cost_usd": pl.Float64, "judge_latency_s": pl.Float64})
    >>> r = cost_latency(rows).by_run.row(0, named=True)
    >>> r["tasks"], round(r["cost_per_task_usd"], 4), r["latency_p50_s"]
    (2, 0.02, 2.0)
    """
    require_check_rows(rows, "cost_latency")
    verdicts = case_verdicts(rows)
    total_latency = pl.col("latency_s") + pl.col("judge_latency_s")
    known = pl.col("cost_usd").is_not_null()
    by_run = verdicts.group_by("run_id").agg(
        pl.len().cast(pl.Int64).alias("tasks"),
        pl.col("cost_usd").mean().alias("cost_per_task_usd"),
        pl.col("system_cost_usd").mean().alias("system_cost_per_task_usd"),
        pl.col("judge_cost_usd").mean().alias("judge_cost_per_task_usd"),
        pl.col("cost_usd").sum().alias("cost_total_usd"),
        pl.col("system_cost_usd").sum().alias("system_cost_total_usd"),
        pl.col("judge_cost_usd").sum().alias("judge_cost_total_usd"),
        pl.col("judge_cost_usd").filter(known).sum().alias("_judge_known"),
        pl.col("cost_usd").null_count().cast(pl.Int64).alias("cost_unknown_tasks"),
        pl.col("latency_s").quantile(0.5, interpolation=Q_METHOD).alias("latency_p50_s"),
        pl.col("latency_s").quantile(0.95, interpolation=Q_METHOD).alias("latency_p95_s"),
        total_latency.quantile(0.5, interpolation=Q_METHOD).alias("total_latency_p50_s"),
        total_latency.quantile(0.95, interpolation=Q_METHOD).alias("total_latency_p95_s"),
    )
    by_run = (
        by_run.with_columns(
            pl.when(pl.col("cost_total_usd") > 0)
            .then(pl.col("_judge_known") / pl.col("cost_total_usd"))
            .otherwise(None)
            .alias("judge_share")
        )
        .drop("_judge_known")
        .sort("run_id")
    )
    tasks = by_run.select("run_id", "tasks")
    s = pl.col("status")
    by_tier = rows.group_by(["run_id", "tier"]).agg(
        pl.len().cast(pl.Int64).alias("checks"),
        count_of(~s.is_in(NOT_RUN_STATUSES)).alias("checks_run"),
        pl.col("judge_cost_usd").sum().alias("judge_cost_usd"),
        pl.col("judge_cost_usd").filter(~s.is_in(NOT_RUN_STATUSES)).mean().alias("judge_cost_per_check_usd"),
        pl.col("judge_latency_s").quantile(0.5, interpolation=Q_METHOD).alias("judge_latency_p50_s"),
        pl.col("judge_latency_s").quantile(0.95, interpolation=Q_METHOD).alias("judge_latency_p95_s"),
    )
    by_tier = (
        by_tier.join(tasks, on="run_id", how="left")
        .with_columns((pl.col("judge_cost_usd") / pl.col("tasks")).alias("judge_cost_per_task_usd"))
        .drop("tasks")
        .sort("run_id", "tier")
    )
    return CostLatency(by_run=by_run, by_tier=by_tier)
