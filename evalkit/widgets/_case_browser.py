"""`CaseBrowser`: filter a suite's cases by slice, check kind, split and words; the matches in a table."""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as widgets

from evalkit.errors import clip
from evalkit.suite import Case, Suite, check_kinds, filter_cases

ANY = "(any)"


def check_summary(case: Case) -> str:
    """The case's checks in a few words each: ``exact label = "billing"``, ``max_words draft <= 150``."""
    parts = []
    for k in case.checks:
        head = k.kind + (f" {k.field}" if k.field else "")
        data = k.model_dump(mode="json", by_alias=True, exclude_none=True)
        if "expected" in data:
            head += " = " + clip(json.dumps(data["expected"], ensure_ascii=False), 40)
        elif "limit" in data:
            head += (" <= " if k.kind == "max_words" else " >= ") + str(data["limit"])
        elif "facts" in data:
            head += " " + clip(json.dumps(data["facts"], ensure_ascii=False), 40)
        parts.append(head)
    return "; ".join(parts)


def _input_text(case: Case) -> str:
    value = case.input
    if isinstance(value, dict):
        return " · ".join(
            f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}" for k, v in value.items()
        )
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def cases_table(cases: list[Case], *, limit: int = 50) -> str:
    """An escaped HTML table of cases: id, slice, split, input and checks (the first `limit`)."""
    if not cases:
        return "<p>No case matches.</p>"
    head = "".join(
        f"<th style='text-align:left'>{h}</th>" for h in ("id", "slice", "split", "input", "checks")
    )
    rows = []
    for c in cases[:limit]:
        cells = [
            f"<code>{html.escape(c.id)}</code>",
            html.escape(c.slice),
            html.escape(c.split),
            html.escape(clip(_input_text(c), 220)),
            html.escape(clip(check_summary(c), 160)),
        ]
        # the id, slice and split are short words: keep each on one line
        styles = ["white-space:nowrap"] * 3 + ["", ""]
        rows.append(
            "<tr>"
            + "".join(
                f'<td style="vertical-align:top;padding:2px 6px;{st}">{x}</td>'
                for x, st in zip(cells, styles, strict=True)
            )
            + "</tr>"
        )
    more = f"<p>showing {limit} of {len(cases)}</p>" if len(cases) > limit else ""
    return (
        '<table class="ek-cases" style="border-collapse:collapse;font-size:12px">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"
    )


class CaseBrowser(widgets.VBox):
    """Filters (slice, check kind, split, free text) over a suite's cases and a table of those that match.

    Set the filter widgets' values (``browser.slice.value = "sarcasm"``) as a person picks them; `matches`
    holds the matching cases.
    """

    def __init__(self, suite: Suite, *, limit: int = 50) -> None:
        self.suite = suite
        self.limit = limit
        counts = suite.slice_counts()
        self.slice = widgets.Dropdown(
            options=[(ANY, None), *((f"{s} ({n})", s) for s, n in counts.items())], description="slice"
        )
        self.kind = widgets.Dropdown(
            options=[(ANY, None), *((k, k) for k in check_kinds(suite.cases))], description="check"
        )
        self.split = widgets.Dropdown(
            options=[(ANY, None), ("dev", "dev"), ("holdout", "holdout")], description="split"
        )
        self.text = widgets.Text(placeholder="words in the id, input, notes or tags", description="find")
        self.count = widgets.HTML()
        self.table = widgets.HTML()
        self.matches: list[Case] = []
        for w in (self.slice, self.kind, self.split, self.text):
            w.observe(self._changed, names="value")
        self.refresh()
        filters = widgets.HBox([self.slice, self.kind, self.split])
        super().__init__([filters, self.text, self.count, self.table])

    def _changed(self, _change: Any) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Filter again and redraw the table."""
        self.matches = filter_cases(
            self.suite.cases,
            slice=self.slice.value,
            kind=self.kind.value,
            split=self.split.value,
            text=self.text.value or None,
        )
        self.count.value = f"<b>{len(self.matches)}</b> of {len(self.suite.cases)} cases match"
        self.table.value = cases_table(self.matches, limit=self.limit)
