"""Altair charts for curating a golden set, in the report charts' style."""

from __future__ import annotations

from typing import cast

import altair as alt
import polars as pl

from evalkit._report._charts import ROW_STEP, WIDTH, WORSE, _need

DEV, HOLDOUT = "#4c78a8", "#9ecae9"


def slice_coverage_chart(
    coverage: pl.DataFrame,
    *,
    min_cases: int = 20,
    title: str = "Cases per slice, by split",
) -> alt.LayerChart:
    """Cases per slice as bars split into dev and holdout, from :func:`evalkit.suite.slice_coverage`.

    A rule marks `min_cases` (default 20): at 20 cases a pass rate between 20% and 80% has a 95% Wilson
    interval 33 to 40 points wide, and it is wider below, too wide to see most changes: such a slice wants
    more cases.
    """
    _need(coverage, ["slice", "cases", "share", "dev", "holdout"], "slice_coverage_chart")
    order = coverage.sort(["cases", "slice"], descending=[True, False]).get_column("slice").to_list()
    long = coverage.select("slice", "cases", "share", "dev", "holdout").unpivot(
        index=["slice", "cases", "share"], on=["dev", "holdout"], variable_name="split", value_name="n"
    )
    bars = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            y=alt.Y("slice:N", sort=order, title=None),
            x=alt.X("n:Q", stack="zero", title="cases"),
            color=alt.Color(
                "split:N", scale=alt.Scale(domain=["dev", "holdout"], range=[DEV, HOLDOUT]), title="split"
            ),
            order=alt.Order("split:N"),
            tooltip=[
                alt.Tooltip("slice:N"),
                alt.Tooltip("split:N"),
                alt.Tooltip("n:Q", title="cases in split"),
                alt.Tooltip("cases:Q", title="cases in slice"),
                alt.Tooltip("share:Q", format=".1%", title="share of suite"),
            ],
        )
    )
    rule = (
        alt.Chart(pl.DataFrame({"min_cases": [min_cases], "label": [f"{min_cases} cases"]}))
        .mark_rule(color=WORSE, strokeDash=[4, 3])
        .encode(x="min_cases:Q", tooltip=[alt.Tooltip("label:N", title="fewer: a wide interval")])
    )
    label = rule.mark_text(color=WORSE, align="left", dx=4, dy=-6, baseline="bottom", fontSize=11).encode(
        text="label:N", y=alt.value(0)
    )
    chart = alt.layer(bars, rule, label).properties(title=title, width=WIDTH, height=alt.Step(ROW_STEP))
    return cast(alt.LayerChart, chart)
