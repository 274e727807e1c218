"""`SliceFailures`: the pass rate by slice as a chart; clicking a slice lists its failing cases below it."""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any, cast

import ipywidgets as widgets

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

    from evalkit.api import Run

SELECTION = "slice_pick"
NOTEBOOK_WIDTH = 560
_MAX_TEXT = 400


def _clip(text: str | None, limit: int = _MAX_TEXT) -> str:
    if text is None:
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show(raw: str | None) -> str:
    """JSON text as a person reads it: a string without its quotes, anything else as compact JSON."""
    if raw is None:
        return ""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def failures_table(failures: pl.DataFrame, *, limit: int = 50) -> str:
    """An escaped HTML table of failing cases: id, status, input, output and each check that did not pass."""
    if failures.is_empty():
        return "<p>No failing or errored case here.</p>"
    rows = []
    for r in failures.head(limit).iter_rows(named=True):
        problems = [
            f"{c['check_name']}: {c['status']}{' — ' + c['detail'] if c.get('detail') else ''}"
            f"{' — ' + c['error'] if c.get('error') else ''}"
            for c in r["checks"] or []
            if c["status"] in ("fail", "error")
        ]
        cells = [
            f"<code>{html.escape(r['case_id'])}</code>",
            html.escape(r["status"]),
            html.escape(_clip(_show(r["input"]))),
            html.escape(_clip(_show(r["output"]) or (r["error"] or ""))),
            "<br>".join(html.escape(_clip(p, 300)) for p in problems),
        ]
        styles = ["white-space:nowrap"] * 2 + [""] * (len(cells) - 2)  # ids and statuses never wrap
        rows.append(
            "<tr>"
            + "".join(
                f'<td style="vertical-align:top;padding:2px 6px;{s}">{c}</td>'
                for c, s in zip(cells, styles, strict=True)
            )
            + "</tr>"
        )
    more = f"<p>showing {limit} of {failures.height}</p>" if failures.height > limit else ""
    head = "".join(f"<th>{h}</th>" for h in ("case", "status", "input", "output", "what failed"))
    return (
        '<table class="ek-failures" style="border-collapse:collapse;font-size:12px">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"
    )


def slice_chart(rates: pl.DataFrame) -> alt.LayerChart:
    """The report's pass-rate-by-slice chart with a click selection on the slice (a field, not an index)."""
    import altair as alt

    from evalkit.charts import slice_pass_rate_chart

    chart = slice_pass_rate_chart(rates, title="Pass rate by slice, 95% interval — click a slice")
    pick = alt.selection_point(name=SELECTION, fields=["slice"], on="click", clear="dblclick")
    # the picked slice stands out, the others fade (all at full strength while none is picked)
    faded = alt.condition(pick, alt.value(1.0), alt.value(0.25))
    layers = [layer.encode(opacity=faded) for layer in chart.layer]
    # a click anywhere along a slice's row picks it, not only on its small marks: a band under each row
    order = sorted(set(rates.filter(rates["rate"].is_not_null()).get_column("slice").to_list()))
    rows = (
        alt.Chart(chart.data)
        .mark_bar(opacity=0.001, color="#000")
        .encode(y=alt.Y("slice:N", sort=order, title=None), x=alt.value(0), x2=alt.value(NOTEBOOK_WIDTH))
    )
    layers = [rows.add_params(pick), *layers]
    # a notebook's output area is narrower than the report's page
    layered = alt.layer(*layers, data=chart.data).properties(title=chart.title, width=NOTEBOOK_WIDTH)
    return cast("alt.LayerChart", layered)


class SliceFailures(widgets.VBox):
    """A run's pass rate by slice; a click on a slice (or `select`) shows that slice's failing cases."""

    def __init__(self, run: Run) -> None:
        import altair as alt

        alt.JupyterChart.enable_offline()  # vega from vl-convert: no CDN, works with no internet
        self.run = run
        self.failures = run.failures()
        rates = run.pass_rate(by="slice")
        self.chart = alt.JupyterChart(slice_chart(rates), embed_options={"renderer": "svg", "actions": False})
        self.table = widgets.HTML(self._prompt())
        self.picked: str | None = None
        self.chart.selections.observe(self._on_pick, [SELECTION])
        super().__init__([self.chart, self.table])

    def _prompt(self) -> str:
        return f"<p>{self.failures.height} failing or errored (case, repeat) in all; click a slice to list its own.</p>"

    def _on_pick(self, change: dict[str, Any]) -> None:
        value = change["new"].value or []
        self.select(value[0]["slice"] if value else None)

    def select(self, slice_name: str | None) -> None:
        """Show the failing cases of `slice_name` (None: the prompt again), as a click on its bar does."""
        import polars as pl

        self.picked = slice_name
        if slice_name is None:
            self.table.value = self._prompt()
            return
        part = self.failures.filter(pl.col("slice") == slice_name)
        self.table.value = f"<h4>{html.escape(slice_name)}: {part.height} failing</h4>" + failures_table(part)
