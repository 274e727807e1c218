"""`DisagreementBrowser`: a confusion heatmap; clicking a cell lists the outputs in it, both reasons side by side."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from evalkit.charts import CELL_SELECTION, confusion_chart

if TYPE_CHECKING:
    import polars as pl

    from evalkit.calibration import Calibration

_MAX_TEXT = 300


def _clip(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _shown(value: Any) -> Any:
    if isinstance(value, bool):
        return "pass" if value else "fail"
    return value


def cell_table(part: pl.DataFrame, show: Sequence[str], *, limit: int = 50) -> str:
    """An escaped HTML table of `part`'s `show` columns (first `limit` rows, the count always said)."""
    if part.is_empty():
        return "<p>No output in this cell.</p>"
    head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in show)
    rows = []
    for r in part.head(limit).iter_rows(named=True):
        cells = "".join(
            f'<td style="vertical-align:top">{html.escape(_clip(_shown(r.get(c))))}</td>' for c in show
        )
        rows.append(f"<tr>{cells}</tr>")
    more = f"<p>showing {limit} of {part.height}</p>" if part.height > limit else ""
    return (
        '<table class="ek-disagreements" style="border-collapse:collapse;font-size:12px">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"
    )


class DisagreementBrowser(widgets.VBox):
    """A heatmap of (`rows` label, `columns` label) over `items`; a click on a cell (or `select`) lists its items.

    Parameters
    ----------
    items:
        One row per rated item, with the two raters' labels in columns `rows` and `columns` (bool labels
        show as pass/fail) and any columns named in `show`.
    rows, columns:
        The two label columns.
    show:
        The columns listed for the picked cell (e.g. case id, both reasons).
    title:
        The chart's title.
    """

    def __init__(
        self,
        items: pl.DataFrame,
        *,
        rows: str = "human",
        columns: str = "judge",
        show: Sequence[str] = (),
        title: str = "Confusion — click a cell to list its outputs",
    ) -> None:
        import altair as alt
        import polars as pl

        alt.JupyterChart.enable_offline()  # vega from vl-convert: no CDN, works with no internet
        label = {True: "pass", False: "fail"}
        self.rows, self.columns = rows, columns

        def as_label(c: str) -> pl.Expr:
            if items.schema[c] == pl.Boolean:
                return pl.col(c).replace_strict(label, return_dtype=pl.String)
            return pl.col(c).cast(pl.String)

        rated = items.filter(pl.col(rows).is_not_null() & pl.col(columns).is_not_null())
        self.items = rated.with_columns(as_label(rows), as_label(columns))
        self.left_out = items.height - rated.height
        self.show = list(show) or [c for c in self.items.columns if c not in (rows, columns)]
        labels = sorted(set(self.items[rows].to_list()) | set(self.items[columns].to_list())) or [
            "fail",
            "pass",
        ]
        grid = pl.DataFrame(
            [{rows: a, columns: b} for a in labels for b in labels],
            schema={rows: pl.String, columns: pl.String},
        )
        counts = self.items.group_by(rows, columns).len("count")
        self.cells = grid.join(counts, on=[rows, columns], how="left").with_columns(
            pl.col("count").fill_null(0)
        )
        self.chart = alt.JupyterChart(
            confusion_chart(self.cells, rows=rows, columns=columns, title=title),
            embed_options={"renderer": "svg", "actions": False},
        )
        self.table = widgets.HTML(self._prompt())
        self.picked: tuple[str, str] | None = None
        self.chart.selections.observe(self._on_pick, [CELL_SELECTION])
        super().__init__([self.chart, self.table])

    @classmethod
    def from_calibration(cls, calibration: Calibration, machine: str | None = None) -> DisagreementBrowser:
        """Human labels against `machine` (a check name; default: the labelled check's own verdict, the judge)."""
        import polars as pl

        frame = calibration.items_frame()
        if frame.is_empty():
            frame = pl.DataFrame(schema={"case_id": pl.String, "human": pl.Boolean, "judge": pl.Boolean})
        column = "judge" if machine is None or f"code:{machine}" not in frame.columns else f"code:{machine}"
        name = "judge" if column == "judge" else machine or "judge"
        picked = frame.rename({column: name}) if column != name else frame
        reason = "judge_reasoning" if column == "judge" else None
        details = {f"{c}": c for c in ("case_id", "slice", "human_reason") if c in picked.columns}
        show = [*details, *([reason] if reason else [])]
        return cls(
            picked,
            rows="human",
            columns=name,
            show=show,
            title=f"Human vs {name} — click a cell to list its outputs",
        )

    def _prompt(self) -> str:
        out = self.items.filter(self.items[self.rows] != self.items[self.columns]).height
        note = f"; {self.left_out} left out (a label missing on either side)" if self.left_out else ""
        return f"<p>{out} of {self.items.height} disagree{note}. Click a cell to list its outputs.</p>"

    def _on_pick(self, change: dict[str, Any]) -> None:
        value = change["new"].value or []
        self.select(*(value[0][self.rows], value[0][self.columns]) if value else (None, None))

    def select(self, row_label: str | None, column_label: str | None) -> None:
        """List the items whose labels are (`row_label`, `column_label`), as a click on that cell does."""
        import polars as pl

        if row_label is None or column_label is None:
            self.picked = None
            self.table.value = self._prompt()
            return
        self.picked = (row_label, column_label)
        part = self.items.filter((pl.col(self.rows) == row_label) & (pl.col(self.columns) == column_label))
        head = f"<h4>{html.escape(self.rows)} {html.escape(row_label)}, {html.escape(self.columns)} {html.escape(column_label)}: {part.height}</h4>"
        self.table.value = head + cell_table(part, self.show)
