"""Honest statistics over evaluation results: pass rates with intervals, repeats, paired comparisons, power.

Every function is pure and works on polars frames that follow the results schema: check-level rows, one per
(run, case, repeat, check), with ``status`` in ``pass | fail | skipped | error``. :func:`case_verdicts`
collapses them to one verdict per (run, case, repeat); most other functions take either level, since both carry
``status``. Only ``pass`` and ``fail`` are scored: errors and unscored rows are counted and reported beside
every rate, never folded into it.

Conventions (each is tested against scipy / statsmodels):

* Pass-rate intervals are Wilson score intervals.
* With repeats, the unit of independence is the case. The clustered standard error is the cluster-robust
  (CR1) sandwich estimate that statsmodels reports by default for an intercept-only OLS with
  ``cov_type="cluster"``: it carries the small-sample factor G/(G-1) for G cases, and with equal repeats
  per case it equals ``sd(case means, ddof=1) / sqrt(G)`` exactly.
* The flip rate of a case is the share of its pairs of scored repeats that disagree:
  ``x(K-x) / C(K, 2)`` for x passes in K repeats. It equals twice the unbiased within-case variance
  ``p(1-p) K/(K-1)``, so the mean flip rate is ``2 * sigma^2``.
* Percentiles use linear interpolation between order statistics (numpy's default ``method="linear"``).
* Paired comparisons report B minus A: a positive difference means run B passes more cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Final

import polars as pl

__all__ = [
    "CHECK_STATUSES",
    "NOT_JUDGED_PREFIX",
    "VERDICT_STATUSES",
    "CostLatency",
    "PairedComparison",
    "PowerPlan",
    "binom_cdf_half",
    "case_verdicts",
    "cases_needed",
    "clustered_pass_rate",
    "compare_runs",
    "cost_latency",
    "dev_vs_holdout",
    "estimate_mde",
    "flip_rates",
    "mcnemar",
    "minimum_detectable_effect",
    "noise_floor",
    "pass_rate",
    "t_ppf",
    "t_sf",
    "wilson_interval",
]

CHECK_STATUSES = ("pass", "fail", "skipped", "error")
VERDICT_STATUSES = ("pass", "fail", "error", "not_scored")
_UNSCORED = ("skipped", "not_scored")
_ANY_STATUS = ("pass", "fail", "skipped", "error", "not_scored")
_ROW_COLUMNS = (
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
_ALL = "all"
# A skipped check whose skipped_reason starts with this could not run (no judge): its verdict is unknown.
NOT_JUDGED_PREFIX = "not judged"
_Q_METHOD: Final = "linear"

By = str | Sequence[str] | None


# ---------------------------------------------------------------------------------------------------------
# Distribution helpers (standard library only)


def _z(confidence: float) -> float:
    """Two-sided normal critical value for a confidence level."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    eps = 1e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 200_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _stirling_error(v: float) -> float:
    """lgamma(v) minus its Stirling approximation (v - 1/2) log v - v + log(2 pi)/2."""
    if v < 15.0:
        return math.lgamma(v) - ((v - 0.5) * math.log(v) - v + _HALF_LOG_2PI)
    r = 1.0 / (v * v)
    series = 1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r * (1.0 / 1188))))
    return series / v


def _scaled_log(a: float, x: float, s: float, d: float) -> float:
    """a * log(x s / a), where x s / a = 1 + d / a: log1p near 1 keeps the precision of large a."""
    t = d / a
    if abs(t) < 0.5:
        return a * math.log1p(t)
    return a * (math.log(x) + math.log(s / a))


def _log_beta_front(a: float, b: float, x: float, y: float) -> float:
    """log(x^a y^b / B(a, b)), arranged so that large a and b do not cancel catastrophically."""
    s = a + b
    d = x * b - y * a
    return (
        _scaled_log(a, x, s, d)
        + _scaled_log(b, y, s, -d)
        + 0.5 * math.log(a * b / s)
        - _HALF_LOG_2PI
        - _stirling_error(a)
        - _stirling_error(b)
        + _stirling_error(s)
    )


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """Regularised incomplete beta I_x(a, b), with y = 1 - x passed in to keep its precision."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = _log_beta_front(a, b, x, y)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, y) / b


def binom_cdf_half(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): the tail behind McNemar's exact test."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return _betainc(float(n - k), float(k + 1), 0.5, 0.5)


def _binom_pmf_half(k: int, n: int) -> float:
    if not 0 <= k <= n:
        return 0.0
    return math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2.0))


def t_sf(t: float, df: float) -> float:
    """Survival function P(T > t) of Student's t with df degrees of freedom."""
    if df <= 0:
        raise ValueError(f"df must be positive, got {df}")
    if math.isnan(t):
        return math.nan
    if t < 0:
        return 1.0 - t_sf(-t, df)
    if math.isinf(t):
        return 0.0
    t2 = t * t
    return 0.5 * _betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2))


def t_ppf(q: float, df: float) -> float:
    """Quantile of Student's t (bisection on :func:`t_sf`, to machine precision)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q}")
    if q < 0.5:
        return -t_ppf(1.0 - q, df)
    if q == 0.5:
        return 0.0
    tail = 1.0 - q
    lo, hi = 0.0, 1.0
    while t_sf(hi, df) > tail:
        lo, hi = hi, hi * 2.0
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if t_sf(mid, df) > tail:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _chi2_1_sf(x: float) -> float:
    """Survival function of chi-square with one degree of freedom."""
    return math.erfc(math.sqrt(max(x, 0.0) / 2.0))


def wilson_interval(passes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for passes out of n; (nan, nan) when n = 0."""
    if n <= 0:
        return (math.nan, math.nan)
    z = _z(confidence)
    p = passes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    low = 0.0 if passes <= 0 else min(max(center - half, 0.0), 1.0)
    high = 1.0 if passes >= n else min(max(center + half, 0.0), 1.0)
    return (low, high)


# ---------------------------------------------------------------------------------------------------------
# Frame helpers


def _as_list(by: By) -> list[str]:
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    return list(by)


def _require(frame: pl.DataFrame, columns: Sequence[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{where}: missing columns {missing}")


def _check_status(frame: pl.DataFrame, allowed: Sequence[str], where: str) -> None:
    bad = frame.filter(~pl.col("status").is_in(list(allowed)) | pl.col("status").is_null())
    if bad.height:
        values = sorted({str(v) for v in bad.get_column("status").unique().to_list()})
        raise ValueError(f"{where}: unknown status values {values}; expected one of {list(allowed)}")


def _score() -> pl.Expr:
    """1.0 for pass, 0.0 for fail, null for anything unscored."""
    s = pl.col("status")
    return pl.when(s == "pass").then(1.0).when(s == "fail").then(0.0).otherwise(None)


def _count(cond: pl.Expr) -> pl.Expr:
    return cond.sum().cast(pl.Int64)


def _agg(frame: pl.DataFrame, keys: list[str], aggs: list[pl.Expr]) -> pl.DataFrame:
    """Group-by aggregation; with no keys, one row for the whole frame (even an empty one)."""
    if keys:
        return frame.group_by(keys).agg(aggs)
    return frame.select(aggs)


def _over(expr: pl.Expr, keys: list[str]) -> pl.Expr:
    return expr.over(keys) if keys else expr


def _join(left: pl.DataFrame, right: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    if keys:
        return left.join(right, on=keys, how="left", nulls_equal=True)
    return pl.concat([left, right], how="horizontal")


def _labelled(out: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Add the ``group`` label (the by-values joined by "/", or "all") first and sort by it."""
    if keys:
        label = pl.concat_str([pl.col(k).cast(pl.String).fill_null("null") for k in keys], separator="/")
        out = out.sort(keys, nulls_last=True)
    else:
        label = pl.lit(_ALL)
    out = out.with_columns(label.alias("group"))
    return out.select(["group", *[c for c in out.columns if c != "group"]])


def _wilson_exprs(n: pl.Expr, rate: pl.Expr, z: float) -> tuple[pl.Expr, pl.Expr]:
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (rate + z2 / (2.0 * n)) / denom
    half = z * (rate * (1.0 - rate) / n + z2 / (4.0 * n * n)).sqrt() / denom
    # At rate 0 (1) the lower (upper) bound is exactly 0 (1); the formula leaves rounding dust.
    low = pl.when(n <= 0).then(None).when(rate <= 0.0).then(0.0).otherwise((center - half).clip(0.0, 1.0))
    high = pl.when(n <= 0).then(None).when(rate >= 1.0).then(1.0).otherwise((center + half).clip(0.0, 1.0))
    return low, high


def _group_summary(frame: pl.DataFrame, keys: list[str], cluster: str | None) -> pl.DataFrame:
    """Per group: counts, pooled rate, binomial SE and, when clustered, the CR1 cluster-robust SE.

    ``n_eff`` is the sample size at which a Wilson interval should be drawn: n without clustering, the
    effective size rate(1-rate)/se^2 with it (the number of clusters when the rate is 0 or 1, or when there
    is a single cluster and so no clustered SE).
    """
    s = pl.col("status")
    base = _agg(
        frame,
        keys,
        [
            _count(s.is_in(["pass", "fail"])).alias("n"),
            _count(s == "pass").alias("passes"),
            _count(s == "error").alias("errors"),
            _count(s.is_in(list(_UNSCORED))).alias("not_scored"),
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
        pl.len().cast(pl.Float64).alias("_m"), _score().sum().alias("_s")
    )
    p = _over(pl.col("_s").sum(), keys) / _over(pl.col("_m").sum(), keys)
    per_cluster = per_cluster.with_columns(
        ((pl.col("_s") - p * pl.col("_m")) ** 2).alias("_u2"), (pl.col("_s") / pl.col("_m")).alias("_mean")
    )
    sums = _agg(
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
    out = _join(base, sums, keys)
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


# ---------------------------------------------------------------------------------------------------------
# 1. Case verdicts


def case_verdicts(rows: pl.DataFrame) -> pl.DataFrame:
    """Collapse check-level rows to one verdict per (run_id, case_id, repeat).

    ``status`` is error if any check errored, else fail if any failed, else not_scored if a check was "not
    judged" (skipped with a ``skipped_reason`` starting "not judged": its verdict is unknown, so the case
    cannot count as a pass), else pass if at least one passed, else not_scored (every check skipped).
    Without a ``skipped_reason`` column every skip counts as a deliberate one. ``passed`` is null unless
    the status is pass or fail.

    Costs: ``cost_usd`` and ``latency_s`` describe the system's call for the (case, repeat) and repeat on
    each of its check rows, so they are taken once (the max), and the system cost is unknown (null) if any
    row leaves it null. Judge cost and latency are summed over checks; a judge check that ran (tier judge,
    status not skipped) with a null ``judge_cost_usd`` makes the judge cost unknown. ``cost_usd`` in the
    result is system plus judge cost, null if either part is unknown.
    """
    _require(rows, _ROW_COLUMNS, "case_verdicts")
    _check_status(rows, CHECK_STATUSES, "case_verdicts")
    s = pl.col("status")
    judge_ran = (pl.col("tier") == "judge") & (s != "skipped")
    if "skipped_reason" in rows.columns:
        reason = pl.col("skipped_reason").str.starts_with(NOT_JUDGED_PREFIX).fill_null(False)
        not_judged = (s == "skipped") & reason
    else:
        not_judged = pl.lit(False)
    out = rows.group_by(["run_id", "case_id", "repeat"]).agg(
        pl.col("slice").first(),
        pl.col("split").first(),
        pl.len().cast(pl.Int64).alias("n_checks"),
        _count(s == "pass").alias("n_pass"),
        _count(s == "fail").alias("n_fail"),
        _count(s == "error").alias("n_error"),
        _count(s == "skipped").alias("n_skipped"),
        _count(not_judged).alias("n_not_judged"),
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


# ---------------------------------------------------------------------------------------------------------
# 2. Pass rate with Wilson interval


def pass_rate(frame: pl.DataFrame, by: By = None, confidence: float = 0.95) -> pl.DataFrame:
    """Pass rate per group with binomial SE and Wilson interval.

    Works on check rows (e.g. ``by="tier"``) or case verdicts (``by="slice"``). Only pass/fail count in
    n; errors and unscored rows (skipped / not_scored) are reported in their own columns. Every row is
    treated as independent: with repeats per case use :func:`clustered_pass_rate`.
    Columns: group, <by...>, n, passes, rate, se, ci_low, ci_high, errors, not_scored.
    """
    _require(frame, ["status", *_as_list(by)], "pass_rate")
    _check_status(frame, _ANY_STATUS, "pass_rate")
    keys = _as_list(by)
    z = _z(confidence)
    out = _group_summary(frame, keys, cluster=None)
    low, high = _wilson_exprs(pl.col("n").cast(pl.Float64), pl.col("rate"), z)
    out = out.with_columns(pl.col("se_binomial").alias("se"), low.alias("ci_low"), high.alias("ci_high"))
    out = _labelled(out, keys)
    return out.select(
        "group", *keys, "n", "passes", "rate", "se", "ci_low", "ci_high", "errors", "not_scored"
    )


# ---------------------------------------------------------------------------------------------------------
# 3. Repeats: clustered SE, flip rate, noise floor


def clustered_pass_rate(
    frame: pl.DataFrame, by: By = None, cluster: str = "case_id", confidence: float = 0.95
) -> pl.DataFrame:
    """Pass rate with the standard error clustered by case (Miller 2024, "Adding Error Bars to Evals").

    ``rate`` is pooled over scored rows. ``se`` is the cluster-robust CR1 estimate
    ``sqrt(G/(G-1) * sum_g (s_g - rate * m_g)^2) / N`` (s_g passes of m_g scored rows in case g, N rows,
    G cases): statsmodels' default ``cov_type="cluster"`` for an intercept-only OLS. With equal repeats it
    equals ``se_case_means = sd(case means) / sqrt(G)``; Miller's uncorrected form is
    ``se * sqrt((G-1)/G)``. ``se_binomial`` is the naive SE that treats rows as independent and
    ``design_effect`` is (se / se_binomial)^2. The interval is Wilson's at the effective size
    ``n_eff = rate(1-rate)/se^2`` (G when the rate is 0 or 1, or with a single case), so it stays inside
    [0, 1].
    """
    keys = _as_list(by)
    _require(frame, ["status", cluster, *keys], "clustered_pass_rate")
    _check_status(frame, _ANY_STATUS, "clustered_pass_rate")
    z = _z(confidence)
    out = _group_summary(frame, keys, cluster=cluster)
    low, high = _wilson_exprs(pl.col("n_eff"), pl.col("rate"), z)
    deff = pl.when(pl.col("se_binomial") > 0).then((pl.col("se") / pl.col("se_binomial")) ** 2)
    out = out.with_columns(
        low.alias("ci_low"), high.alias("ci_high"), deff.otherwise(None).alias("design_effect")
    )
    out = _labelled(out, keys)
    return out.select(
        "group",
        *keys,
        pl.col("n_clusters").alias("n_cases"),
        "n",
        "passes",
        "rate",
        "se",
        "ci_low",
        "ci_high",
        "se_binomial",
        "design_effect",
        "case_mean",
        "se_case_means",
        "errors",
        "not_scored",
    )


def flip_rates(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Per (run_id, case_id): scored repeats k, passes, mean, flip rate and within-case variance.

    ``flip_rate`` is the share of pairs of scored repeats that disagree, ``x(k-x) / C(k, 2)``;
    ``within_var`` is the unbiased Bernoulli variance ``mean(1-mean) k/(k-1)``; flip_rate = 2 * within_var.
    Both are null for cases with fewer than two scored repeats.
    """
    _require(verdicts, ["run_id", "case_id", "slice", "status"], "flip_rates")
    out = verdicts.group_by(["run_id", "case_id"]).agg(
        pl.col("slice").first(),
        _score().count().cast(pl.Int64).alias("k"),
        _score().sum().cast(pl.Int64).alias("passes"),
        _score().mean().alias("mean"),
    )
    k = pl.col("k").cast(pl.Float64)
    x = pl.col("passes").cast(pl.Float64)
    many = pl.col("k") >= 2
    return out.with_columns(
        pl.when(many).then(2.0 * x * (k - x) / (k * (k - 1.0))).otherwise(None).alias("flip_rate"),
        pl.when(many).then(x * (k - x) / (k * (k - 1.0))).otherwise(None).alias("within_var"),
    ).sort("run_id", "case_id")


def noise_floor(verdicts: pl.DataFrame) -> pl.DataFrame:
    """How much the pass rate of an unchanged system moves between repeats, per run_id.

    ``sd_repeat_rates``: sd (ddof=1) across repeats of the per-repeat pass rate (each repeat index is one
    pass over the suite). ``sigma2``: mean over cases with >= 2 scored repeats of p_i(1-p_i) K/(K-1).
    ``sd_expected = sqrt(sigma2 / n_cases_repeated)``: the sd of one pass's rate that within-case noise alone
    implies (two passes differ by sqrt(2) times that). Also the mean flip rate and the flaky-case count.
    """
    _require(verdicts, ["run_id", "case_id", "repeat", "status"], "noise_floor")
    per_repeat = (
        verdicts.group_by(["run_id", "repeat"])
        .agg(_score().mean().alias("_rate"))
        .group_by("run_id")
        .agg(
            pl.col("_rate").count().cast(pl.Int64).alias("repeats"),
            pl.col("_rate").std(ddof=1).alias("sd_repeat_rates"),
        )
    )
    cases = flip_rates(verdicts)
    many = pl.col("k") >= 2
    per_case = cases.group_by("run_id").agg(
        _count(pl.col("k") > 0).alias("n_cases"),
        _count(many).alias("n_cases_repeated"),
        (pl.col("passes").sum() / pl.col("k").sum()).alias("rate"),
        pl.col("within_var").mean().alias("sigma2"),
        pl.col("flip_rate").mean().alias("mean_flip_rate"),
        _count(many & (pl.col("mean") > 0) & (pl.col("mean") < 1)).alias("flaky_cases"),
    )
    out = per_case.join(per_repeat, on="run_id", how="left").with_columns(
        pl.when(pl.col("n_cases_repeated") > 0)
        .then((pl.col("sigma2") / pl.col("n_cases_repeated")).sqrt())
        .otherwise(None)
        .alias("sd_expected")
    )
    return out.select(
        "run_id",
        "n_cases",
        "repeats",
        "rate",
        "sd_repeat_rates",
        "sigma2",
        "sd_expected",
        "mean_flip_rate",
        "flaky_cases",
        "n_cases_repeated",
    ).sort("run_id")


# ---------------------------------------------------------------------------------------------------------
# 4. Paired comparison


@dataclass(frozen=True, eq=False)
class PairedComparison:
    """Run B against run A on their shared cases (difference = B - A).

    ``table`` is [[both_pass, only_a], [only_b, both_fail]] (rows: A pass/fail; columns: B pass/fail) on
    case-level majority verdicts (a case passes when more than half its scored repeats pass; a tie is not
    a pass). The difference, its SE (sd of per-case differences of repeat means / sqrt(n)) and its
    Student-t interval are on case means, as ``scipy.stats.ttest_rel`` would compute them; ``t_pvalue`` is
    that paired t-test's two-sided p (1 or 0 when every difference is equal, where scipy gives nan).
    """

    run_a: str
    run_b: str
    n: int
    rate_a: float
    rate_b: float
    diff: float
    se: float
    ci_low: float
    ci_high: float
    t_pvalue: float
    both_pass: int
    only_a: int
    only_b: int
    both_fail: int
    mcnemar_exact_p: float
    mcnemar_midp: float
    mcnemar_chi2: float
    mcnemar_chi2_p: float
    flipped: pl.DataFrame
    missing_in_a: list[str]
    missing_in_b: list[str]
    unscored: list[str]

    @property
    def table(self) -> list[list[int]]:
        return [[self.both_pass, self.only_a], [self.only_b, self.both_fail]]

    @property
    def discordant(self) -> int:
        return self.only_a + self.only_b


def mcnemar(only_a: int, only_b: int) -> tuple[float, float, float, float]:
    """McNemar's test on the discordant counts: (exact p, mid-p, chi-square, chi-square p).

    Exact: two-sided binomial test, ``min(1, 2 P(X <= min(b, c)))`` with X ~ Bin(b + c, 1/2). Mid-p
    subtracts P(X = min) once. Chi-square uses Edwards' continuity correction,
    ``max(|b - c| - 1, 0)^2 / (b + c)`` (statsmodels omits the max, which only matters when b = c).
    With no discordant pairs every p is 1.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError("counts must be non-negative")
    n = only_a + only_b
    if n == 0:
        return (1.0, 1.0, 0.0, 1.0)
    k = min(only_a, only_b)
    tail = binom_cdf_half(k, n)
    exact = min(1.0, 2.0 * tail)
    midp = min(1.0, 2.0 * tail - _binom_pmf_half(k, n))
    chi2 = max(abs(only_a - only_b) - 1, 0) ** 2 / n
    return (exact, midp, chi2, _chi2_1_sf(chi2))


def _case_means(verdicts: pl.DataFrame, run: str) -> pl.DataFrame:
    return (
        verdicts.filter(pl.col("run_id") == run)
        .group_by("case_id")
        .agg(
            pl.col("slice").first(),
            _score().count().cast(pl.Int64).alias("k"),
            _score().mean().alias("mean"),
        )
    )


def _paired_frame(verdicts: pl.DataFrame, run_a: str, run_b: str) -> pl.DataFrame:
    """Full outer join of per-case repeat means of A and B on case_id."""
    _require(verdicts, ["run_id", "case_id", "slice", "status"], "compare_runs")
    a = _case_means(verdicts, run_a).rename({"k": "k_a", "mean": "mean_a", "slice": "slice_a"})
    b = _case_means(verdicts, run_b).rename({"k": "k_b", "mean": "mean_b", "slice": "slice_b"})
    a = a.with_columns(pl.lit(True).alias("in_a"))
    b = b.with_columns(pl.lit(True).alias("in_b"))
    joined = a.join(b, on="case_id", how="full", coalesce=True)
    return joined.with_columns(
        pl.coalesce("slice_a", "slice_b").alias("slice"),
        pl.col("in_a").fill_null(False),
        pl.col("in_b").fill_null(False),
    ).drop("slice_a", "slice_b")


def compare_runs(
    verdicts: pl.DataFrame, run_a: str, run_b: str, confidence: float = 0.95
) -> PairedComparison:
    """Paired comparison of two runs on shared case ids, repeats averaged per case first.

    Cases present in only one run land in ``missing_in_a`` / ``missing_in_b``; cases present in both but
    without a scored repeat in one of them land in ``unscored``. ``flipped`` lists the cases whose
    majority verdict changed, with direction "pass->fail" (A passed, B failed) or "fail->pass".
    """
    _z(confidence)
    joined = _paired_frame(verdicts, run_a, run_b)
    missing_in_b = joined.filter(~pl.col("in_b")).get_column("case_id").sort().to_list()
    missing_in_a = joined.filter(~pl.col("in_a")).get_column("case_id").sort().to_list()
    both = joined.filter(pl.col("in_a") & pl.col("in_b"))
    ok = (pl.col("k_a") > 0) & (pl.col("k_b") > 0)
    unscored = both.filter(~ok).get_column("case_id").sort().to_list()
    shared = both.filter(ok).with_columns(
        (pl.col("mean_b") - pl.col("mean_a")).alias("d"),
        (pl.col("mean_a") > 0.5).alias("pass_a"),
        (pl.col("mean_b") > 0.5).alias("pass_b"),
    )
    summary = shared.select(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("mean_a").mean().alias("rate_a"),
        pl.col("mean_b").mean().alias("rate_b"),
        pl.col("d").mean().alias("diff"),
        pl.col("d").std(ddof=1).alias("sd"),
        _count(pl.col("pass_a") & pl.col("pass_b")).alias("both_pass"),
        _count(pl.col("pass_a") & ~pl.col("pass_b")).alias("only_a"),
        _count(~pl.col("pass_a") & pl.col("pass_b")).alias("only_b"),
        _count(~pl.col("pass_a") & ~pl.col("pass_b")).alias("both_fail"),
    ).row(0, named=True)
    n = int(summary["n"])
    diff = _float(summary["diff"])
    se, low, high, p_t = _t_interval(diff, _float(summary["sd"]), n, confidence)
    only_a, only_b = int(summary["only_a"]), int(summary["only_b"])
    exact, midp, chi2, chi2_p = mcnemar(only_a, only_b)
    flipped = (
        shared.filter(pl.col("pass_a") != pl.col("pass_b"))
        .select(
            "case_id",
            "slice",
            "mean_a",
            "mean_b",
            pl.when(pl.col("pass_a"))
            .then(pl.lit("pass->fail"))
            .otherwise(pl.lit("fail->pass"))
            .alias("direction"),
        )
        .sort("case_id")
    )
    return PairedComparison(
        run_a=run_a,
        run_b=run_b,
        n=n,
        rate_a=_float(summary["rate_a"]),
        rate_b=_float(summary["rate_b"]),
        diff=diff,
        se=se,
        ci_low=low,
        ci_high=high,
        t_pvalue=p_t,
        both_pass=int(summary["both_pass"]),
        only_a=only_a,
        only_b=only_b,
        both_fail=int(summary["both_fail"]),
        mcnemar_exact_p=exact,
        mcnemar_midp=midp,
        mcnemar_chi2=chi2,
        mcnemar_chi2_p=chi2_p,
        flipped=flipped,
        missing_in_a=missing_in_a,
        missing_in_b=missing_in_b,
        unscored=unscored,
    )


def _float(value: Any) -> float:
    return math.nan if value is None else float(value)


def _t_interval(diff: float, sd: float, n: int, confidence: float) -> tuple[float, float, float, float]:
    """SE, Student-t interval and two-sided p-value for a mean of n paired differences."""
    if n < 2 or math.isnan(sd):
        return (math.nan, math.nan, math.nan, math.nan)
    se = sd / math.sqrt(n)
    if se == 0.0:
        return (0.0, diff, diff, 1.0 if diff == 0.0 else 0.0)
    df = n - 1
    t_crit = t_ppf(1.0 - (1.0 - confidence) / 2.0, df)
    p = min(1.0, 2.0 * t_sf(abs(diff / se), df))
    return (se, diff - t_crit * se, diff + t_crit * se, p)


# ---------------------------------------------------------------------------------------------------------
# 5. Minimum detectable effect


def _z_sum(alpha: float, power: float) -> float:
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("alpha and power must be in (0, 1)")
    return NormalDist().inv_cdf(1.0 - alpha / 2.0) + NormalDist().inv_cdf(power)


def _pair_variance(omega2: float, s2_a: float, s2_b: float, k_a: float, k_b: float) -> float:
    if min(omega2, s2_a, s2_b) < 0 or k_a < 1 or k_b < 1:
        raise ValueError("variances must be >= 0 and repeats >= 1")
    return omega2 + s2_a / k_a + s2_b / k_b


def minimum_detectable_effect(
    n: int,
    omega2: float,
    s2_a: float = 0.0,
    s2_b: float = 0.0,
    k_a: float = 1,
    k_b: float = 1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    """Smallest true difference a two-sided test at ``alpha`` detects with ``power`` on n cases.

    delta = (z_{1-alpha/2} + z_{power}) * sqrt((omega2 + s2_a/k_a + s2_b/k_b) / n), where omega2 is the
    variance across cases of the true paired difference and s2_a, s2_b the mean within-case variances of
    runs with k_a, k_b repeats.
    """
    if n <= 0:
        return math.inf
    return _z_sum(alpha, power) * math.sqrt(_pair_variance(omega2, s2_a, s2_b, k_a, k_b) / n)


def cases_needed(
    effect: float,
    omega2: float,
    s2_a: float = 0.0,
    s2_b: float = 0.0,
    k_a: float = 1,
    k_b: float = 1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    """Cases needed for :func:`minimum_detectable_effect` to reach ``effect`` (rounded up)."""
    if effect <= 0:
        raise ValueError(f"effect must be positive, got {effect}")
    v = _pair_variance(omega2, s2_a, s2_b, k_a, k_b)
    n = (_z_sum(alpha, power) / effect) ** 2 * v
    # Guard against float noise pushing an exact integer just above itself.
    return max(1, math.ceil(n - 1e-9))


@dataclass(frozen=True)
class PowerPlan:
    """Variance components measured from runs and the MDE they imply.

    ``method`` is "paired" (omega2 from per-case differences of run means) or "unpaired" (no baseline:
    omega2 = 2 p(1-p), s2 terms 0).
    """

    method: str
    n: int
    omega2: float
    s2_a: float
    s2_b: float
    k_a: float
    k_b: float
    var_diff: float
    alpha: float
    power: float
    mde: float


def estimate_mde(
    verdicts: pl.DataFrame,
    run_a: str,
    run_b: str | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    n: int | None = None,
    k_a: float | None = None,
    k_b: float | None = None,
) -> PowerPlan:
    """Measure the variance terms from runs and return the MDE for n cases with k_a, k_b repeats.

    Paired (``run_b`` given): ``var_diff`` is the variance of per-case differences of repeat means, which
    already holds the within-case noise; omega2 removes it, ``max(var_diff - s2_a/K_a - s2_b/K_b, 0)``
    (K the harmonic mean of observed repeats), so planning with other k does not count it twice. At the
    observed design the MDE is (z_{1-alpha/2} + z_power) times the paired SE.
    Unpaired fallback (no baseline): omega2 = 2 p(1-p) for the mean case pass rate p of ``run_a``, the
    variance of the difference of two independent runs of one repeat; it already holds within-case noise
    at k = 1, so s2 terms are 0 and the result is conservative for k > 1.
    Defaults: n, k_a, k_b as observed.
    """
    _require(verdicts, ["run_id", "case_id", "slice", "status"], "estimate_mde")
    if run_b is None:
        a = _case_means(verdicts, run_a).filter(pl.col("k") > 0)
        p = _float(a.get_column("mean").mean()) if a.height else math.nan
        omega2 = 2.0 * p * (1.0 - p)
        n_use = a.height if n is None else n
        mde = minimum_detectable_effect(n_use, omega2, alpha=alpha, power=power) if a.height else math.nan
        return PowerPlan("unpaired", n_use, omega2, 0.0, 0.0, 1.0, 1.0, omega2, alpha, power, mde)
    joined = _paired_frame(verdicts, run_a, run_b)
    shared = joined.filter(pl.col("in_a") & pl.col("in_b") & (pl.col("k_a") > 0) & (pl.col("k_b") > 0))
    kf_a, kf_b = pl.col("k_a").cast(pl.Float64), pl.col("k_b").cast(pl.Float64)
    wv_a = pl.when(kf_a >= 2).then(pl.col("mean_a") * (1.0 - pl.col("mean_a")) * kf_a / (kf_a - 1.0))
    wv_b = pl.when(kf_b >= 2).then(pl.col("mean_b") * (1.0 - pl.col("mean_b")) * kf_b / (kf_b - 1.0))
    m = shared.select(
        pl.len().cast(pl.Int64).alias("n"),
        (pl.col("mean_b") - pl.col("mean_a")).var(ddof=1).alias("var_diff"),
        wv_a.otherwise(None).mean().fill_null(0.0).alias("s2_a"),
        wv_b.otherwise(None).mean().fill_null(0.0).alias("s2_b"),
        (1.0 / (1.0 / kf_a).mean()).alias("k_a"),
        (1.0 / (1.0 / kf_b).mean()).alias("k_b"),
    ).row(0, named=True)
    n_obs = int(m["n"])
    var_diff, s2_a, s2_b = _float(m["var_diff"]), _float(m["s2_a"]), _float(m["s2_b"])
    ka_obs, kb_obs = _float(m["k_a"]), _float(m["k_b"])
    if n_obs < 2 or math.isnan(var_diff):
        nan = math.nan
        return PowerPlan("paired", n_obs, nan, s2_a, s2_b, ka_obs, kb_obs, nan, alpha, power, nan)
    omega2 = max(var_diff - s2_a / ka_obs - s2_b / kb_obs, 0.0)
    n_use = n_obs if n is None else n
    ka = ka_obs if k_a is None else k_a
    kb = kb_obs if k_b is None else k_b
    mde = minimum_detectable_effect(n_use, omega2, s2_a, s2_b, ka, kb, alpha, power)
    return PowerPlan("paired", n_use, omega2, s2_a, s2_b, ka, kb, var_diff, alpha, power, mde)


# ---------------------------------------------------------------------------------------------------------
# 6. Cost and latency


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
    """Cost per task and p50/p95 latency per run and per tier, judge spend split out."""
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
        pl.col("latency_s").quantile(0.5, interpolation=_Q_METHOD).alias("latency_p50_s"),
        pl.col("latency_s").quantile(0.95, interpolation=_Q_METHOD).alias("latency_p95_s"),
        total_latency.quantile(0.5, interpolation=_Q_METHOD).alias("total_latency_p50_s"),
        total_latency.quantile(0.95, interpolation=_Q_METHOD).alias("total_latency_p95_s"),
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
        _count(s != "skipped").alias("checks_run"),
        pl.col("judge_cost_usd").sum().alias("judge_cost_usd"),
        pl.col("judge_cost_usd").filter(s != "skipped").mean().alias("judge_cost_per_check_usd"),
        pl.col("judge_latency_s").quantile(0.5, interpolation=_Q_METHOD).alias("judge_latency_p50_s"),
        pl.col("judge_latency_s").quantile(0.95, interpolation=_Q_METHOD).alias("judge_latency_p95_s"),
    )
    by_tier = (
        by_tier.join(tasks, on="run_id", how="left")
        .with_columns((pl.col("judge_cost_usd") / pl.col("tasks")).alias("judge_cost_per_task_usd"))
        .drop("tasks")
        .sort("run_id", "tier")
    )
    return CostLatency(by_run=by_run, by_tier=by_tier)


# ---------------------------------------------------------------------------------------------------------
# 7. Dev vs holdout


def dev_vs_holdout(
    frame: pl.DataFrame, by: By = None, confidence: float = 0.95, cluster: str | None = "case_id"
) -> pl.DataFrame:
    """Dev and holdout pass rates side by side, with a warning when dev beats holdout beyond the noise.

    Each split's SE is binomial, or clustered by ``cluster`` (CR1, see :func:`clustered_pass_rate`) when
    some case has more than one scored row. ``diff = rate_dev - rate_holdout`` with
    ``se_diff = sqrt(se_dev^2 + se_holdout^2)`` (two independent proportions) and a normal interval;
    ``warning`` is true when that interval lies wholly above 0. Split intervals are Wilson's.
    """
    keys = _as_list(by)
    _require(frame, ["status", "split", *keys, *([cluster] if cluster else [])], "dev_vs_holdout")
    _check_status(frame, _ANY_STATUS, "dev_vs_holdout")
    z = _z(confidence)
    summary = _group_summary(frame, [*keys, "split"], cluster=cluster)
    repeated = pl.col("max_cluster_size").fill_null(1) > 1
    se = pl.when(repeated).then(pl.col("se")).otherwise(pl.col("se_binomial"))
    n_eff = pl.when(repeated).then(pl.col("n_eff")).otherwise(pl.col("n").cast(pl.Float64))
    summary = summary.with_columns(se.alias("se"), n_eff.alias("n_eff"))
    low, high = _wilson_exprs(pl.col("n_eff"), pl.col("rate"), z)
    summary = summary.with_columns(low.alias("ci_low"), high.alias("ci_high"))
    cols = ["n", "rate", "se", "ci_low", "ci_high"]

    def side(split: str) -> pl.DataFrame:
        part = summary.filter(pl.col("split") == split).select(*keys, *cols)
        return part.rename({c: f"{c}_{split}" for c in cols})

    if keys:
        out = frame.select(keys).unique()
        for split in ("dev", "holdout"):
            out = out.join(side(split), on=keys, how="left", nulls_equal=True)
    else:
        parts = [side(split) for split in ("dev", "holdout")]
        out = pl.concat([p if p.height else _null_row(p) for p in parts], how="horizontal")
    diff = pl.col("rate_dev") - pl.col("rate_holdout")
    se_diff = (pl.col("se_dev") ** 2 + pl.col("se_holdout") ** 2).sqrt()
    out = out.with_columns(diff.alias("diff"), se_diff.alias("se_diff")).with_columns(
        (pl.col("diff") - z * pl.col("se_diff")).alias("diff_ci_low"),
        (pl.col("diff") + z * pl.col("se_diff")).alias("diff_ci_high"),
    )
    out = out.with_columns((pl.col("diff_ci_low") > 0).fill_null(False).alias("warning"))
    for split in ("dev", "holdout"):
        out = out.with_columns(pl.col(f"n_{split}").fill_null(0))
    return _labelled(out, keys)


def _null_row(part: pl.DataFrame) -> pl.DataFrame:
    return pl.DataFrame([pl.Series(c, [None], dtype=part.schema[c]) for c in part.columns])
