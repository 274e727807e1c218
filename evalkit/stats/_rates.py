"""Pass rates: Wilson intervals, the clustered SE for repeats, flip rates and the noise floor."""

from __future__ import annotations

import polars as pl

from evalkit.stats._dist import z_critical
from evalkit.stats._frames import (
    ANY_STATUS,
    By,
    as_list,
    check_status,
    count_of,
    group_summary,
    labelled,
    require_columns,
    require_verdicts,
    score,
    wilson_exprs,
)


def pass_rate(frame: pl.DataFrame, *, by: By = None, confidence: float = 0.95) -> pl.DataFrame:
    """Pass rate per group with binomial SE and Wilson interval.

    Takes case verdicts (:func:`case_verdicts`), or check rows grouped by a check column (``by="tier"``)
    for a per-check rate; check rows otherwise are refused, since they weight a case by its number of
    checks. Only pass/fail count in n; errors and unscored rows (skipped / not_scored) are reported in
    their own columns. Every row is treated as independent: with repeats per case use
    :func:`clustered_pass_rate`.

    Parameters
    ----------
    frame:
        Case verdicts, or check rows when ``by`` holds a check column.
    by:
        Column(s) to group by; None for one row over the whole frame.
    confidence:
        Confidence level of the interval.

    Returns
    -------
    Columns group, <by...>, n, passes, rate, se, ci_low, ci_high, errors, not_scored.

    >>> import polars as pl
    >>> v = pl.DataFrame({"case_id": ["a", "b", "c", "d"], "status": ["pass", "pass", "fail", "error"]})
    >>> r = pass_rate(v).row(0, named=True)
    >>> r["n"], r["passes"], round(r["rate"], 3), round(r["ci_low"], 3), round(r["ci_high"], 3), r["errors"]
    (3, 2, 0.667, 0.208, 0.939, 1)
    """
    require_verdicts(frame, "pass_rate", by=as_list(by), per_check_ok=True)
    require_columns(frame, ["status", *as_list(by)], "pass_rate")
    check_status(frame, ANY_STATUS, "pass_rate")
    keys = as_list(by)
    z = z_critical(confidence)
    out = group_summary(frame, keys, cluster=None)
    low, high = wilson_exprs(pl.col("n").cast(pl.Float64), pl.col("rate"), z)
    out = out.with_columns(pl.col("se_binomial").alias("se"), low.alias("ci_low"), high.alias("ci_high"))
    out = labelled(out, keys)
    return out.select(
        "group", *keys, "n", "passes", "rate", "se", "ci_low", "ci_high", "errors", "not_scored"
    )


def clustered_pass_rate(
    frame: pl.DataFrame, *, by: By = None, cluster: str = "case_id", confidence: float = 0.95
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

    Parameters
    ----------
    frame:
        Case verdicts (one row per case and repeat), or check rows when ``by`` holds a check column.
    by:
        Column(s) to group by; None for one row over the whole frame.
    cluster:
        The column whose values are the independent units.
    confidence:
        Confidence level of the interval.

    Returns
    -------
    Columns group, <by...>, n_cases, n, passes, rate, se, ci_low, ci_high, se_binomial, design_effect,
    case_mean, se_case_means, errors, not_scored.

    >>> import polars as pl
    >>> v = pl.DataFrame({"case_id": ["a", "a", "b", "b", "c", "c"],
    ...                   "status": ["pass", "pass", "pass", "fail", "fail", "fail"]})
    >>> r = clustered_pass_rate(v).row(0, named=True)
    >>> r["n_cases"], r["n"], r["rate"], round(r["se"], 4), round(r["se_binomial"], 4)
    (3, 6, 0.5, 0.2887, 0.2041)
    """
    keys = as_list(by)
    require_verdicts(frame, "clustered_pass_rate", by=keys, per_check_ok=True)
    require_columns(frame, ["status", cluster, *keys], "clustered_pass_rate")
    check_status(frame, ANY_STATUS, "clustered_pass_rate")
    z = z_critical(confidence)
    out = group_summary(frame, keys, cluster=cluster)
    low, high = wilson_exprs(pl.col("n_eff"), pl.col("rate"), z)
    deff = pl.when(pl.col("se_binomial") > 0).then((pl.col("se") / pl.col("se_binomial")) ** 2)
    out = out.with_columns(
        low.alias("ci_low"), high.alias("ci_high"), deff.otherwise(None).alias("design_effect")
    )
    out = labelled(out, keys)
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

    Parameters
    ----------
    verdicts:
        Case verdicts with columns run_id, case_id, slice, status.

    Returns
    -------
    One row per (run_id, case_id): slice, k, passes, mean, flip_rate, within_var.

    >>> import polars as pl
    >>> v = pl.DataFrame({"run_id": ["r"] * 3, "case_id": ["a"] * 3, "slice": ["s"] * 3,
    ...                   "status": ["pass", "fail", "pass"]})
    >>> r = flip_rates(v).row(0, named=True)
    >>> r["k"], r["passes"], round(r["flip_rate"], 4), round(r["within_var"], 4)
    (3, 2, 0.6667, 0.3333)
    """
    require_verdicts(verdicts, "flip_rates")
    require_columns(verdicts, ["run_id", "case_id", "slice", "status"], "flip_rates")
    out = verdicts.group_by(["run_id", "case_id"]).agg(
        pl.col("slice").first(),
        score().count().cast(pl.Int64).alias("k"),
        score().sum().cast(pl.Int64).alias("passes"),
        score().mean().alias("mean"),
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

    Parameters
    ----------
    verdicts:
        Case verdicts with columns run_id, case_id, slice, repeat, status.

    Returns
    -------
    One row per run_id: n_cases, repeats, rate, sd_repeat_rates, sigma2, sd_expected, mean_flip_rate,
    flaky_cases, n_cases_repeated.

    >>> import polars as pl
    >>> v = pl.DataFrame({"run_id": ["r"] * 4, "case_id": ["a", "a", "b", "b"], "slice": ["s"] * 4,
    ...                   "repeat": [0, 1, 0, 1], "status": ["pass", "fail", "pass", "pass"]})
    >>> r = noise_floor(v).row(0, named=True)
    >>> r["repeats"], r["rate"], r["sigma2"], r["flaky_cases"], round(r["sd_repeat_rates"], 4)
    (2, 0.75, 0.25, 1, 0.3536)
    """
    require_verdicts(verdicts, "noise_floor")
    require_columns(verdicts, ["run_id", "case_id", "repeat", "status"], "noise_floor")
    per_repeat = (
        verdicts.group_by(["run_id", "repeat"])
        .agg(score().mean().alias("_rate"))
        .group_by("run_id")
        .agg(
            pl.col("_rate").count().cast(pl.Int64).alias("repeats"),
            pl.col("_rate").std(ddof=1).alias("sd_repeat_rates"),
        )
    )
    cases = flip_rates(verdicts)
    many = pl.col("k") >= 2
    per_case = cases.group_by("run_id").agg(
        count_of(pl.col("k") > 0).alias("n_cases"),
        count_of(many).alias("n_cases_repeated"),
        (pl.col("passes").sum() / pl.col("k").sum()).alias("rate"),
        pl.col("within_var").mean().alias("sigma2"),
        pl.col("flip_rate").mean().alias("mean_flip_rate"),
        count_of(many & (pl.col("mean") > 0) & (pl.col("mean") < 1)).alias("flaky_cases"),
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
