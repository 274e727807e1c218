"""Case verdicts: check rows collapsed to one verdict per (run, case, repeat)."""

from __future__ import annotations

import polars as pl

from evalkit._results import CHECK_STATUSES, NOT_RUN_STATUSES
from evalkit.stats._frames import (
    ROW_COLUMNS,
    check_status,
    count_of,
    require_check_rows,
    require_columns,
)


def case_verdicts(rows: pl.DataFrame) -> pl.DataFrame:
    """Collapse check-level rows to one verdict per (run_id, case_id, repeat).

    ``status`` is error if any check errored, else fail if any failed, else not_scored if a check was
    not_judged (it should have run but no judge was available: its verdict is unknown, so the case cannot
    count as a pass), else pass if at least one passed, else not_scored (every check skipped). ``passed`` is
    null unless the status is pass or fail.

    Costs: ``cost_usd`` and ``latency_s`` describe the system's call for the (case, repeat) and repeat on
    each of its check rows, so they are taken once (the max), and the system cost is unknown (null) if any
    row leaves it null. Judge cost and latency are summed over checks; a judge check that ran (tier judge,
    status neither skipped nor not_judged) with a null ``judge_cost_usd`` makes the judge cost unknown. ``cost_usd`` in the
    result is system plus judge cost, null if either part is unknown.

    Parameters
    ----------
    rows:
        Check rows, one per (run, case, repeat, check), as :func:`evalkit._results.read_run` returns them.

    Returns
    -------
    One row per (run_id, case_id, repeat), sorted by them: slice, split, status, passed, counts of checks
    by status (n_checks, n_pass, n_fail, n_error, n_skipped, n_not_judged), cost_usd, system_cost_usd,
    judge_cost_usd, latency_s, judge_latency_s.

    >>> import polars as pl
    >>> rows = pl.DataFrame({
    ...     "run_id": ["r"] * 3, "case_id": ["a", "a", "b"], "slice": ["s"] * 3, "split": ["dev"] * 3,
    ...     "repeat": [0, 0, 0], "check_index": [0, 1, 0], "tier": ["exact", "code", "exact"],
    ...     "status": ["pass", "fail", "pass"], "cost_usd": [0.01] * 3, "judge_cost_usd": [None] * 3,
    ...     "latency_s": [1.0] * 3, "judge_latency_s": [None] * 3,
    ... }, schema_overrides={"judge_cost_usd": pl.Float64, "judge_latency_s": pl.Float64})
    >>> case_verdicts(rows).select("case_id", "status", "n_checks").rows()
    [('a', 'fail', 2), ('b', 'pass', 1)]
    """
    require_check_rows(rows, "case_verdicts")
    require_columns(rows, ROW_COLUMNS, "case_verdicts")
    check_status(rows, CHECK_STATUSES, "case_verdicts")
    s = pl.col("status")
    judge_ran = (pl.col("tier") == "judge") & ~s.is_in(NOT_RUN_STATUSES)
    out = rows.group_by(["run_id", "case_id", "repeat"]).agg(
        pl.col("slice").first(),
        pl.col("split").first(),
        pl.len().cast(pl.Int64).alias("n_checks"),
        count_of(s == "pass").alias("n_pass"),
        count_of(s == "fail").alias("n_fail"),
        count_of(s == "error").alias("n_error"),
        count_of(s == "skipped").alias("n_skipped"),
        count_of(s == "not_judged").alias("n_not_judged"),
        pl.col("cost_usd").max().alias("system_cost_usd"),
        pl.col("cost_usd").null_count().alias("_sys_unknown"),
        pl.col("judge_cost_usd").sum().alias("judge_cost_usd"),
        (judge_ran & pl.col("judge_cost_usd").is_null()).any().alias("_judge_unknown"),
        pl.col("latency_s").max().alias("latency_s"),
        pl.col("judge_latency_s").sum().alias("judge_latency_s"),
    )
    status = (
        pl.when(pl.col("n_error") > 0)
        .then(pl.lit("error"))
        .when(pl.col("n_fail") > 0)
        .then(pl.lit("fail"))
        .when(pl.col("n_not_judged") > 0)
        .then(pl.lit("not_scored"))
        .when(pl.col("n_pass") > 0)
        .then(pl.lit("pass"))
        .otherwise(pl.lit("not_scored"))
    )
    system_cost = (
        pl.when(pl.col("_sys_unknown") == 0)
        .then(pl.col("system_cost_usd"))
        .otherwise(None)
        .alias("system_cost_usd")
    )
    judge_cost = (
        pl.when(pl.col("_judge_unknown"))
        .then(None)
        .otherwise(pl.col("judge_cost_usd"))
        .alias("judge_cost_usd")
    )
    out = out.with_columns(status.alias("status"), system_cost, judge_cost).with_columns(
        pl.when(s == "pass").then(True).when(s == "fail").then(False).otherwise(None).alias("passed"),
        (pl.col("system_cost_usd") + pl.col("judge_cost_usd")).alias("cost_usd"),
    )
    return out.select(
        "run_id",
        "case_id",
        "repeat",
        "slice",
        "split",
        "status",
        "passed",
        "n_checks",
        "n_pass",
        "n_fail",
        "n_error",
        "n_skipped",
        "n_not_judged",
        "cost_usd",
        "system_cost_usd",
        "judge_cost_usd",
        "latency_s",
        "judge_latency_s",
    ).sort("run_id", "case_id", "repeat")
