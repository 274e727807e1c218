"""The confusion heatmap: one rater's labels against another's, a cell per pair of labels, clickable on both fields."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import polars as pl

from evalkit.calibration import Confusion

if TYPE_CHECKING:
    import altair as alt

CELL_SELECTION = "confusion_cell"
_SHOWN = {"true": "pass", "false": "fail"}


def confusion_frame(confusion: Confusion, *, rows: str = "human", columns: str = "judge") -> pl.DataFrame:
    """A `Confusion` as one row per cell: the `rows` rater's label, the `columns` rater's label, count.

    True/false labels read as pass/fail.
    """
    shown = [_SHOWN.get(label, label) for label in confusion.labels]
    data = [
        {rows: shown[i], columns: shown[j], "count": int(confusion.counts[i][j])}
        for i in range(len(shown))
        for j in range(len(shown))
    ]
    return pl.DataFrame(data, schema={rows: pl.String, columns: pl.String, "count": pl.Int64})


def confusion_chart(
    cells: pl.DataFrame | Confusion,
    *,
    rows: str = "human",
    columns: str = "judge",
    title: str = "Confusion — click a cell to list its outputs",
    size: int = 70,
) -> alt.LayerChart:
    """A heatmap of label pairs with the count in each cell and a click selection on both label fields.

    Parameters
    ----------
    cells:
        A `Confusion` (rows are `rows`' labels), or a frame with columns `rows`, `columns` and count.
    rows, columns:
        The two raters' names: the fields of the cells and the selection (``chart.selections`` reads them).
    title:
        The chart's title.
    size:
        The side of a cell in pixels.

    Returns
    -------
    altair.LayerChart
        Rects coloured by count (diagonal = agreement) with the counts written on them.
    """
    import altair as alt

    frame = confusion_frame(cells, rows=rows, columns=columns) if isinstance(cells, Confusion) else cells
    labels = list(dict.fromkeys(frame[rows].to_list() + frame[columns].to_list()))
    pick = alt.selection_point(name=CELL_SELECTION, fields=[rows, columns], on="click", clear="dblclick")
    base = alt.Chart(frame).encode(
        x=alt.X(f"{columns}:N", sort=labels, title=columns, axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y(f"{rows}:N", sort=labels, title=rows),
    )
    peak = max([1, *(int(v) for v in frame["count"].fill_null(0).to_list())])
    rect = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues", domain=[0, peak]), legend=None),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.35)),
        tooltip=[alt.Tooltip(f"{rows}:N"), alt.Tooltip(f"{columns}:N"), alt.Tooltip("count:Q")],
    )
    text = base.mark_text(fontSize=14).encode(
        text="count:Q",
        color=alt.condition(alt.datum.count > peak / 2, alt.value("white"), alt.value("#222")),
    )
    layered = alt.layer(rect.add_params(pick), text).properties(
        title=title, width=size * len(labels), height=size * len(labels)
    )
    return cast("alt.LayerChart", layered)
