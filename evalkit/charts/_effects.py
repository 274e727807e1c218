"""Altair charts of probe effects, in the report's style: a point per effect, its interval as a bar, a line at 0.

The frames come from the probes' ``*_rows`` functions (one row per probe, attack, or set and judge), so a
notebook can filter them before drawing. An effect is coloured as found only when its whole interval lies away
from zero.
"""

from __future__ import annotations

from typing import cast

import altair as alt
import polars as pl

from evalkit._report import NOISE, ROW_STEP, WIDTH, WORSE
from evalkit.probes import ROWS_SCHEMA

BELOW = "#d35400"
"""The colour of an effect found below 0 (WORSE's is above 0)."""


def effect_chart(
    rows: pl.DataFrame,
    *,
    title: str,
    axis_title: str,
    signed: bool = True,
    domain: tuple[float, float] | None = None,
) -> alt.LayerChart:
    """Each row's effect (point) with its interval (bar), a rule at zero, one line per label (and group).

    Parameters
    ----------
    rows:
        A frame from `position_rows`, `consistency_rows`, `verbosity_rows` or `injection_rows`.
    title, axis_title:
        The chart's title and the effect axis's title.
    signed:
        Effects that can be negative (a difference: "+" formats) or rates (0 to 1).
    domain:
        The effect axis's range (default: the data's, and [0, 1] for rates).

    Returns
    -------
    A layered altair chart. Colour says whether the interval lies wholly above zero, wholly below, or
    across it (for rates, a lower bound above zero is "found").
    """
    missing = [c for c in ROWS_SCHEMA if c not in rows.columns]
    if missing:
        raise ValueError(f"effect_chart: missing columns {missing}")
    data = rows.filter(pl.col("effect").is_not_null()).with_columns(
        pl.col("ci_low").fill_null(pl.col("effect")),
        pl.col("ci_high").fill_null(pl.col("effect")),
        pl.when(pl.col("ci_low") > 0)
        .then(pl.lit("above 0"))
        .when(pl.col("ci_high") < 0)
        .then(pl.lit("below 0"))
        .otherwise(pl.lit("interval covers 0"))
        .alias("finding"),
    )
    groups = data.get_column("group").unique().to_list()
    fmt = "+.0%" if signed else ".0%"
    scale = (
        alt.Scale(domain=list(domain)) if domain else (alt.Scale() if signed else alt.Scale(domain=[0, 1]))
    )
    order = list(dict.fromkeys(data.get_column("label").to_list()))
    # a rate cannot fall below 0, so its legend has no "below 0"; a pull either way is a bias found
    findings = ["below 0", "interval covers 0", "above 0"] if signed else ["interval covers 0", "above 0"]
    # a pull either way is a bias found; the two ways have colours of their own, or the legend shows two alike
    colours = [BELOW, NOISE, WORSE] if signed else [NOISE, WORSE]
    # legends below the plot: long y labels (data set names) leave no room beside it
    legend = alt.Legend(orient="bottom", direction="horizontal")
    color = alt.Color("finding:N", scale=alt.Scale(domain=findings, range=colours), title=None, legend=legend)
    offset = alt.YOffset("group:N") if len(groups) > 1 else alt.Undefined
    base = alt.Chart(data).encode(y=alt.Y("label:N", sort=order, title=None), color=color, yOffset=offset)
    bars = base.mark_rule(strokeWidth=2, opacity=0.7).encode(
        x=alt.X("ci_low:Q", scale=scale, axis=alt.Axis(format=fmt), title=axis_title), x2="ci_high:Q"
    )
    shape = alt.Shape("group:N", title=None, legend=legend) if len(groups) > 1 else alt.Undefined
    points = base.mark_point(filled=True, size=60).encode(
        x=alt.X("effect:Q", scale=scale),
        shape=shape,
        tooltip=[
            alt.Tooltip("label:N"),
            alt.Tooltip("group:N"),
            alt.Tooltip("n:Q"),
            alt.Tooltip("effect:Q", format="+.1%" if signed else ".1%"),
            alt.Tooltip("ci_low:Q", format="+.1%" if signed else ".1%", title="95% low"),
            alt.Tooltip("ci_high:Q", format="+.1%" if signed else ".1%", title="95% high"),
        ],
    )
    zero = alt.Chart(pl.DataFrame({"zero": [0.0]})).mark_rule(color="#333").encode(x="zero:Q")
    # with a y offset the step is per offset row, so each label gets one row per group
    chart = alt.layer(zero, bars, points).properties(title=title, width=WIDTH, height=alt.Step(ROW_STEP))
    return cast(alt.LayerChart, chart)
