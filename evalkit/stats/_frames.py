"""Frame helpers shared by the statistics: column and status checks, the grain check, grouping, Wilson columns.

A frame has one of two grains. Check rows (``Run.checks()``) have one row per (run, case, repeat, check) and a
``check_index`` / ``check_kind`` column; case verdicts (:func:`evalkit.stats.case_verdicts`) have one row per
(run, case, repeat). A pass rate over check rows weights a case by its number of checks, so every statistic
says which grain it needs and refuses the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import polars as pl

from evalkit._results import CASE_STATUSES, CHECK_ONLY_COLUMNS, CHECK_STATUSES, SCORED_STATUSES
from evalkit.errors import GrainError

VERDICT_STATUSES: Final = CASE_STATUSES
UNSCORED: Final = ("skipped", "not_judged", "not_scored")
ANY_STATUS: Final = tuple(dict.fromkeys((*CHECK_STATUSES, *CASE_STATUSES)))
SCORED: Final = SCORED_STATUSES
ALL: Final = "all"
Q_METHOD: Final = "linear"  # percentiles as numpy.percentile by default
ROW_COLUMNS: Final = (
    "run_id",
    "case_id",
    "slice",
    "split",
    "repeat",
    "tier",
    "status",
    "cost_usd",
    "judge_cost_usd",
    "latency_s",
    "judge_latency_s",
)
"""The check-row columns case_verdicts reads."""
# Grouping by one of these makes a rate over check rows a per-check rate, which is what it then means.
CHECK_KEYS: Final = ("tier", *CHECK_ONLY_COLUMNS)
# The column case_verdicts adds: a frame with it holds verdicts, not checks.
VERDICT_MARKER: Final = "n_checks"

By = str | Sequence[str] | None


def require_verdicts(
    frame: pl.DataFrame, where: str, *, by: Sequence[str] = (), per_check_ok: bool = False
) -> None:
    """Refuse check rows where one row per (case, repeat) is needed.

    With ``per_check_ok`` a rate grouped by a check column (``by="tier"``) may take check rows: it is then
    a per-check rate by design.
    """
    markers = [c for c in CHECK_ONLY_COLUMNS if c in frame.columns]
    if not markers:
        return
    if per_check_ok and any(k in CHECK_KEYS for k in by):
        return
    also = ', or group by a check column (by="tier") for a per-check rate' if per_check_ok else ""
    raise GrainError(
        f"{where} needs one row per (case, repeat); this frame has one row per check "
        f"(it has a `{markers[0]}` column): pass case_verdicts(rows){also}"
    )


def require_check_rows(frame: pl.DataFrame, where: str) -> None:
    """Refuse case verdicts where one row per (case, repeat, check) is needed."""
    if VERDICT_MARKER in frame.columns:
        raise GrainError(
            f"{where} needs one row per (case, repeat, check), as Run.checks() returns them; this frame has one "
            f"row per (case, repeat) (it has an `{VERDICT_MARKER}` column, as case_verdicts returns): "
            "pass the check rows themselves"
        )


def float_or_nan(value: Any) -> float:
    return float("nan") if value is None else float(value)


def null_row(part: pl.DataFrame) -> pl.DataFrame:
    return pl.DataFrame([pl.Series(c, [None], dtype=part.schema[c]) for c in part.columns])


def as_list(by: By) -> list[str]:
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    return list(by)


def require_columns(frame: pl.DataFrame, columns: Sequence[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{where}: missing columns {missing}")


def check_status(frame: pl.DataFrame, allowed: Sequence[str], where: str) -> None:
    bad = frame.filter(~pl.col("status").is_in(list(allowed)) | pl.col("status").is_null())
    if bad.height:
        values = sorted({str(v) for v in bad.get_column("status").unique().to_list()})
        raise ValueError(f"{where}: unknown status values {values}; expected one of {list(allowed)}")


def score() -> pl.Expr:
    """1.0 for pass, 0.0 for fail, null for anything unscored."""
    s = pl.col("status")
    return pl.when(s == "pass").then(1.0).when(s == "fail").then(0.0).otherwise(None)


def count_of(cond: pl.Expr) -> pl.Expr:
    return cond.sum().cast(pl.Int64)


def agg_by(frame: pl.DataFrame, keys: list[str], aggs: list[pl.Expr]) -> pl.DataFrame:
    """Group-by aggregation; with no keys, one row for the whole frame (even an empty one)."""
    if keys:
        return frame.group_by(keys).agg(aggs)
    return frame.select(aggs)


def over(expr: pl.Expr, keys: list[str]) -> pl.Expr:
    return expr.over(keys) if keys else expr


def join_on(left: pl.DataFrame, right: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    if keys:
        return left.join(right, on=keys, how="left", nulls_equal=True)
    return pl.concat([left, right], how="horizontal")


def labelled(out: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Add the ``group`` label (the by-values joined by "/", or "all") first and sort by it."""
    if keys:
        label = pl.concat_str([pl.col(k).cast(pl.String).fill_null("null") for k in keys], separator="/")
        out = out.sort(keys, nulls_last=True)
    else:
        label = pl.lit(ALL)
    out = out.with_columns(label.alias("group"))
    return out.select(["group", *[c for c in out.columns if c != "group"]])


def wilson_exprs(n: pl.Expr, rate: pl.Expr, z: float) -> tuple[pl.Expr, pl.Expr]:
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (rate + z2 / (2.0 * n)) / denom
    half = z * (rate * (1.0 - rate) / n + z2 / (4.0 * n * n)).sqrt() / denom
    # At rate 0 (1) the lower (upper) bound is exactly 0 (1); the formula leaves rounding dust.
    low = pl.when(n <= 0).then(None).when(rate <= 0.0).then(0.0).otherwise((center - half).clip(0.0, 1.0))
    high = pl.when(n <= 0).then(None).when(rate >= 1.0).then(1.0).otherwise((center + half).clip(0.0, 1.0))
    return low, high


def group_summary(frame: pl.DataFrame, keys: list[str], cluster: str | None) -> pl.DataFrame:
    """Per group: counts, pooled rate, binomial SE and, when clustered, the CR1 cluster-robust SE.

    ``n_eff`` is the sample size at which a Wilson interval should be drawn: n without clustering, the
    effective size rate(1-rate)/se^2 with it (the number of clusters when the rate is 0 or 1, or when there
    is a single cluster and so no clustered SE).
    """
    s = pl.col("status")
    base = agg_by(
        frame,
        keys,
        [
            count_of(s.is_in(["pass", "fail"])).alias("n"),
            count_of(s == "pass").alias("passes"),
            count_of(s == "error").alias("errors"),
            count_of(s.is_in(list(UNSCORED))).alias("not_scored"),
        ],
    )
    rate = pl.when(pl.col("n") > 0).then(pl.col("passes") / pl.col("n")).otherwise(None)
    base = base.with_columns(rate.alias("rate")).with_columns(
        (pl.col("rate") * (1.0 - pl.col("rate")) / pl.col("n")).sqrt().alias("se_binomial")
    )
    if cluster is None:
        return base.with_columns(
            pl.col("n").cast(pl.Float64).alias("n_eff"),
            pl.col("n").alias("n_clusters"),
            pl.lit(1, dtype=pl.Int64).alias("max_cluster_size"),
            pl.col("se_binomial").alias("se"),
        )
    scored = frame.filter(s.is_in(["pass", "fail"]))
    per_cluster = scored.group_by([*keys, cluster]).agg(
        pl.len().cast(pl.Float64).alias("_m"), score().sum().alias("_s")
    )
    p = over(pl.col("_s").sum(), keys) / over(pl.col("_m").sum(), keys)
    per_cluster = per_cluster.with_columns(
        ((pl.col("_s") - p * pl.col("_m")) ** 2).alias("_u2"), (pl.col("_s") / pl.col("_m")).alias("_mean")
    )
    sums = agg_by(
        per_cluster,
        keys,
        [
            pl.len().cast(pl.Int64).alias("n_clusters"),
            pl.col("_m").max().cast(pl.Int64).alias("max_cluster_size"),
            pl.col("_u2").sum().alias("_ssu"),
            pl.col("_mean").mean().alias("case_mean"),
            pl.col("_mean").std(ddof=1).alias("_sd_means"),
        ],
    )
    out = join_on(base, sums, keys)
    g = pl.col("n_clusters")
    se = pl.when(g > 1).then((pl.col("_ssu") * g / (g - 1)).sqrt() / pl.col("n")).otherwise(None)
    out = out.with_columns(
        pl.col("n_clusters").fill_null(0),
        se.alias("se"),
        (pl.col("_sd_means") / g.cast(pl.Float64).sqrt()).alias("se_case_means"),
    )
    interior = (pl.col("rate") > 0.0) & (pl.col("rate") < 1.0) & (pl.col("se") > 0.0)
    n_eff = (
        pl.when(interior)
        .then(pl.col("rate") * (1.0 - pl.col("rate")) / pl.col("se") ** 2)
        .when(pl.col("n") > 0)
        .then(g.cast(pl.Float64))
        .otherwise(None)
    )
    return out.with_columns(n_eff.alias("n_eff")).drop("_ssu", "_sd_means")
