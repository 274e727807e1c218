"""Altair chart builders shared by the HTML report and the notebooks.

Each takes a polars frame as the statistics in :mod:`evalkit.stats` return it and gives back a declarative
chart; nothing here computes a statistic. Intervals are drawn as bars around a point, so a difference
that sits inside the noise looks like one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import altair as alt
import polars as pl

# the page is about 1070 px wide inside its margins; the y labels and legend need about 200 of them
WIDTH = 760
ROW_STEP = 20
WORSE, BETTER, NOISE = "#c0392b", "#1e8449", "#7f8c8d"

AnyChart = alt.Chart | alt.LayerChart


def _need(frame: pl.DataFrame, columns: Sequence[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{where}: missing columns {missing}")


def slice_pass_rate_chart(
    rates: pl.DataFrame, title: str = "Pass rate by slice, 95% interval", *, axis_title: str = "pass rate"
) -> alt.LayerChart:
    """Per-slice pass rate (point) with its interval (bar), from ``pass_rate(verdicts, by="slice")``.

    ``clustered_pass_rate`` frames work too. With a ``run`` column, the runs sit side by side per slice.
    Slices with nothing scored are left out: they have no rate to draw.
    """
    _need(rates, ["slice", "rate", "ci_low", "ci_high", "n"], "slice_pass_rate_chart")
    has_run = "run" in rates.columns
    data = rates.filter(pl.col("rate").is_not_null()).select(
        "slice", "rate", "ci_low", "ci_high", "n", *(["run"] if has_run else [])
    )
    order = sorted(set(data.get_column("slice").to_list()))
    y = alt.Y("slice:N", sort=order, title=None)
    x_scale = alt.Scale(domain=[0, 1])
    tooltip = [
        alt.Tooltip("slice:N"),
        alt.Tooltip("n:Q", title="scored"),
        alt.Tooltip("rate:Q", format=".1%"),
        alt.Tooltip("ci_low:Q", format=".1%", title="95% low"),
        alt.Tooltip("ci_high:Q", format=".1%", title="95% high"),
    ]
    base = alt.Chart(data).encode(y=y)
    extra: dict[str, alt.YOffset | alt.Color] = {}
    if has_run:
        extra = {"yOffset": alt.YOffset("run:N"), "color": alt.Color("run:N", title="run")}
    bars = base.mark_rule(strokeWidth=2, opacity=0.6).encode(
        x=alt.X("ci_low:Q", scale=x_scale, axis=alt.Axis(format="%"), title=axis_title),
        x2="ci_high:Q",
        **extra,
    )
    points = base.mark_point(filled=True, size=50).encode(
        x=alt.X("rate:Q", scale=x_scale), tooltip=tooltip, **extra
    )
    chart = alt.layer(bars, points).properties(
        title=title, width=WIDTH, height=alt.Step(ROW_STEP * (2 if has_run else 1))
    )
    return cast(alt.LayerChart, chart)


def slice_delta_chart(
    deltas: pl.DataFrame, title: str = "Change against the baseline by slice, 95% interval"
) -> alt.LayerChart:
    """Per-slice paired difference (this run minus the baseline) with its interval and a line at zero.

    Takes columns slice, diff, ci_low, ci_high, n (as :func:`evalkit._baseline.slice_deltas` returns).
    A slice is coloured worse or better only when its whole interval is on that side of zero.
    """
    _need(deltas, ["slice", "diff", "ci_low", "ci_high", "n"], "slice_delta_chart")
    data = (
        deltas.filter(pl.col("diff").is_not_null())
        .select("slice", "diff", "ci_low", "ci_high", "n")
        .with_columns(
            pl.when(pl.col("ci_high") < 0)
            .then(pl.lit("worse"))
            .when(pl.col("ci_low") > 0)
            .then(pl.lit("better"))
            .otherwise(pl.lit("within noise"))
            .alias("moved"),
            # A slice too small for an interval still gets a point; its bar collapses onto it.
            pl.col("ci_low").fill_nan(None).fill_null(pl.col("diff")),
            pl.col("ci_high").fill_nan(None).fill_null(pl.col("diff")),
        )
        .sort("diff", "slice")
    )
    order = data.get_column("slice").to_list()
    color = alt.Color(
        "moved:N",
        scale=alt.Scale(domain=["worse", "within noise", "better"], range=[WORSE, NOISE, BETTER]),
        title=None,
    )
    base = alt.Chart(data).encode(y=alt.Y("slice:N", sort=order, title=None), color=color)
    axis = alt.Axis(format="+.0%")
    bars = base.mark_rule(strokeWidth=2, opacity=0.7).encode(
        x=alt.X("ci_low:Q", axis=axis, title="pass rate change (this run - baseline)"), x2="ci_high:Q"
    )
    points = base.mark_point(filled=True, size=50).encode(
        x="diff:Q",
        tooltip=[
            alt.Tooltip("slice:N"),
            alt.Tooltip("n:Q", title="paired cases"),
            alt.Tooltip("diff:Q", format="+.1%", title="change"),
            alt.Tooltip("ci_low:Q", format="+.1%", title="95% low"),
            alt.Tooltip("ci_high:Q", format="+.1%", title="95% high"),
        ],
    )
    zero = alt.Chart(pl.DataFrame({"zero": [0.0]})).mark_rule(color="#333").encode(x="zero:Q")
    chart = alt.layer(zero, bars, points).properties(title=title, width=WIDTH, height=alt.Step(ROW_STEP))
    return cast(alt.LayerChart, chart)


_METRICS = {
    "cost_per_task_usd": "cost per task (USD)",
    "latency_p50_ms": "latency p50 (ms)",
    "latency_p95_ms": "latency p95 (ms)",
}


def cost_latency_chart(by_run: pl.DataFrame, title: str = "Cost and latency") -> alt.Chart:
    """Cost per task and p50/p95 system latency per run, one panel per measure.

    Takes ``cost_latency(rows).by_run``; unknown values (a system that reports no cost) are left out.
    """
    _need(by_run, ["run_id", "cost_per_task_usd", "latency_p50_s", "latency_p95_s"], "cost_latency_chart")
    long = (
        by_run.select(
            "run_id",
            "cost_per_task_usd",
            (pl.col("latency_p50_s") * 1000).alias("latency_p50_ms"),
            (pl.col("latency_p95_s") * 1000).alias("latency_p95_ms"),
        )
        .unpivot(index="run_id", variable_name="metric", value_name="value")
        .filter(pl.col("value").is_not_null() & pl.col("value").is_not_nan())
        .with_columns(pl.col("metric").replace_strict(_METRICS))
    )
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("value:Q", title=None, axis=alt.Axis(format="~g", tickCount=4, labelOverlap=True)),
            y=alt.Y("run_id:N", title=None),
            color=alt.Color("run_id:N", legend=None),
            tooltip=[alt.Tooltip("run_id:N"), alt.Tooltip("metric:N"), alt.Tooltip("value:Q", format=".4g")],
            facet=alt.Facet("metric:N", columns=1, sort=list(_METRICS.values()), title=None),
        )
        .properties(title=title, width=WIDTH, height=alt.Step(ROW_STEP))
        .resolve_scale(x="independent")
    )


def _no_line_separators(value: Any) -> Any:
    """`value` with U+2028 and U+2029 in its strings made spaces: Vega parses the values it sorts and filters
    on as script, where they end a line (a slice named with one broke the whole report)."""
    if isinstance(value, str):
        return value.replace("\u2028", " ").replace("\u2029", " ")
    if isinstance(value, list):
        return [_no_line_separators(v) for v in value]
    if isinstance(value, dict):
        return {k: _no_line_separators(v) for k, v in value.items()}
    return value


def to_svg(chart: AnyChart) -> str:
    """Render a chart to an SVG string offline (vl-convert), ready to inline in HTML."""
    import vl_convert

    return str(vl_convert.vegalite_to_svg(_no_line_separators(chart.to_dict())))
