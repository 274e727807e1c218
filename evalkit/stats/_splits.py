"""Dev against holdout: a warning when the development split beats the holdout beyond the noise."""

from __future__ import annotations

import polars as pl

from evalkit.stats._dist import z_critical
from evalkit.stats._frames import (
    ANY_STATUS,
    By,
    as_list,
    check_status,
    group_summary,
    labelled,
    null_row,
    require_columns,
    require_verdicts,
    wilson_exprs,
)


def dev_vs_holdout(
    frame: pl.DataFrame, *, by: By = None, confidence: float = 0.95, cluster: str | None = "case_id"
) -> pl.DataFrame:
    """Dev and holdout pass rates side by side, with a warning when dev beats holdout beyond the noise.

    Each split's SE is binomial, or clustered by ``cluster`` (CR1, see :func:`clustered_pass_rate`) when
    some case has more than one scored row. ``diff = rate_dev - rate_holdout`` with
    ``se_diff = sqrt(se_dev^2 + se_holdout^2)`` (two independent proportions). Split intervals are Wilson's
    (at the effective size when clustered), and the interval of the difference is Newcombe's hybrid score
    interval built from them (statsmodels' ``method="newcomb"``); ``warning`` is true when it lies wholly
    above 0.

    Parameters
    ----------
    frame:
        Case verdicts with a ``split`` column, or check rows when ``by`` holds a check column.
    by:
        Column(s) to group by; None for one row over the whole frame.
    confidence:
        Confidence level of the intervals.
    cluster:
        The column whose values are independent units when cases repeat; None to treat rows as independent.

    Returns
    -------
    One row per group: n, rate, se, ci_low, ci_high for each split (suffix _dev, _holdout), diff, se_diff,
    diff_ci_low, diff_ci_high and warning.

    >>> import polars as pl
    >>> v = pl.DataFrame({"case_id": [f"c{i}" for i in range(8)], "split": ["dev"] * 4 + ["holdout"] * 4,
    ...                   "status": ["pass"] * 4 + ["pass", "fail", "fail", "fail"]})
    >>> r = dev_vs_holdout(v).row(0, named=True)
    >>> r["rate_dev"], r["rate_holdout"], r["diff"], r["warning"]
    (1.0, 0.25, 0.75, True)
    """
    keys = as_list(by)
    require_verdicts(frame, "dev_vs_holdout", by=keys, per_check_ok=True)
    require_columns(frame, ["status", "split", *keys, *([cluster] if cluster else [])], "dev_vs_holdout")
    check_status(frame, ANY_STATUS, "dev_vs_holdout")
    z = z_critical(confidence)
    summary = group_summary(frame, [*keys, "split"], cluster=cluster)
    repeated = pl.col("max_cluster_size").fill_null(1) > 1
    se = pl.when(repeated).then(pl.col("se")).otherwise(pl.col("se_binomial"))
    n_eff = pl.when(repeated).then(pl.col("n_eff")).otherwise(pl.col("n").cast(pl.Float64))
    summary = summary.with_columns(se.alias("se"), n_eff.alias("n_eff"))
    low, high = wilson_exprs(pl.col("n_eff"), pl.col("rate"), z)
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
        out = pl.concat([p if p.height else null_row(p) for p in parts], how="horizontal")
    diff = pl.col("rate_dev") - pl.col("rate_holdout")
    se_diff = (pl.col("se_dev") ** 2 + pl.col("se_holdout") ** 2).sqrt()
    # Newcombe's hybrid score interval from the two Wilson intervals: inside [-1, 1] and of positive width
    # however small a split, where diff +/- z * se_diff collapses to a point when a split is all pass.
    p1, l1, u1 = pl.col("rate_dev"), pl.col("ci_low_dev"), pl.col("ci_high_dev")
    p2, l2, u2 = pl.col("rate_holdout"), pl.col("ci_low_holdout"), pl.col("ci_high_holdout")
    below = ((p1 - l1) ** 2 + (u2 - p2) ** 2).sqrt()
    above = ((u1 - p1) ** 2 + (p2 - l2) ** 2).sqrt()
    out = out.with_columns(diff.alias("diff"), se_diff.alias("se_diff")).with_columns(
        (pl.col("diff") - below).clip(-1.0, 1.0).alias("diff_ci_low"),
        (pl.col("diff") + above).clip(-1.0, 1.0).alias("diff_ci_high"),
    )
    out = out.with_columns((pl.col("diff_ci_low") > 0).fill_null(False).alias("warning"))
    for split in ("dev", "holdout"):
        out = out.with_columns(pl.col(f"n_{split}").fill_null(0))
    return labelled(out, keys)
