"""`FlippedCases`: the cases whose verdict changed between two runs; picking one shows both sides of it."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import polars as pl

    from evalkit.api import Run, RunComparison

_MAX_TEXT = 2000
_CHECK_FIELDS = ("check_name", "check_kind", "check_field", "status", "detail", "error", "judge_reasoning")
NO_OUTPUTS = "The baseline's verdict here: {status}. {note}"
"""The reference side of a baseline.json that stores no outputs (format 1, or saved with --no-outputs)."""
NOT_STORED = "{path} stores no output for this case (its verdict: {status})."


@dataclass(frozen=True)
class Side:
    """One run's view of a case: each repeat's status, output, error and checks; or a note saying why not."""

    run_id: str
    repeats: list[dict[str, Any]]
    note: str | None = None


@dataclass(frozen=True)
class FlippedCase:
    """A case whose majority verdict changed: its input and what each run (A before, B after) made of it."""

    case_id: str
    slice: str | None
    direction: str
    mean_a: float
    mean_b: float
    input: Any
    a: Side
    b: Side


def flipped_order(flipped: pl.DataFrame) -> pl.DataFrame:
    """Regressions (pass->fail) first, then improvements; by slice and case id within each."""
    import polars as pl

    return flipped.sort(pl.col("direction") != "pass->fail", "slice", "case_id", nulls_last=True)


def _repeats(rows: pl.DataFrame, case_id: str) -> list[dict[str, Any]]:
    import polars as pl

    mine = rows.filter(pl.col("case_id") == case_id).sort("repeat", "check_index")
    wanted = [c for c in _CHECK_FIELDS if c in mine.columns]
    out = []
    for part in mine.partition_by("repeat", maintain_order=True):
        first = part.row(0, named=True)
        entry = {
            "repeat": first["repeat"],
            "status": first["case_status"],
            "output": first["output"],
            "error": first["case_error"],
            "checks": part.select(wanted).to_dicts(),
        }
        if first.get("output_clipped"):  # a baseline.json's stored output, cut to its cap
            entry["output_chars"] = first["output_chars"]
        out.append(entry)
    return out


def flipped_case(
    cmp: RunComparison, rows: pl.DataFrame, case_id: str, *, case_input: Any = None
) -> FlippedCase:
    """Both sides of one flipped case of `cmp` (run B against reference A).

    Parameters
    ----------
    cmp:
        The comparison (``run.compare(other)``).
    rows:
        Run B's check rows (``run.checks()``).
    case_id:
        A case in ``cmp.flipped()``.
    case_input:
        The case's input, when the suite is at hand.

    Returns
    -------
    FlippedCase
        The reference side comes from the reference run's rows, or the first repeat a baseline.json
        stores; a baseline.json that stores no outputs leaves it empty with a note saying so.
    """
    import polars as pl

    hit = cmp.flipped().filter(pl.col("case_id") == case_id)
    if hit.is_empty():
        raise ValueError(f"{case_id!r} is not a flipped case of {cmp.run_b} against {cmp.run_a}")
    row = hit.row(0, named=True)
    ref = cmp.comparison.reference
    status = ref.verdicts.filter(pl.col("case_id") == case_id).get_column("status").to_list()
    verdict = status[0] if status else "none"
    repeats = _repeats(ref.output_rows, case_id) if ref.output_rows is not None else []
    if repeats:
        a = Side(cmp.run_a, repeats)
    elif ref.output_rows is not None:
        a = Side(cmp.run_a, [], NOT_STORED.format(path=ref.path, status=verdict))
    else:
        a = Side(cmp.run_a, [], NO_OUTPUTS.format(status=verdict, note=ref.outputs_note or ""))
    return FlippedCase(
        case_id=case_id,
        slice=row["slice"],
        direction=row["direction"],
        mean_a=row["mean_a"],
        mean_b=row["mean_b"],
        input=case_input,
        a=a,
        b=Side(cmp.run_b, _repeats(rows, case_id)),
    )


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _pre(value: str) -> str:
    return (
        '<pre style="white-space:pre-wrap;margin:2px 0;padding:4px;background:#f6f6f8;font-size:12px">'
        f"{html.escape(_clip(value))}</pre>"
    )


def _output_text(raw: str | None) -> str:
    """JSON text as a person reads it: a string without its quotes, anything else indented."""
    if raw is None:
        return "(no output)"
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)


_COLOURS = {"pass": "#1e8449", "fail": "#c0392b", "error": "#c0392b"}


def _status(status: str | None) -> str:
    colour = _COLOURS.get(status or "", "#7f8c8d")
    return f'<b style="color:{colour}">{html.escape(status or "?")}</b>'


def _side_html(side: Side) -> str:
    if side.note is not None:
        return f"<p><i>{html.escape(side.note)}</i></p>"
    parts = []
    for r in side.repeats:
        checks = "".join(
            f"<li>{html.escape(c.get('check_name') or c.get('check_kind') or '?')}"
            f"{' on ' + html.escape(c['check_field']) if c.get('check_field') else ''}: {_status(c.get('status'))}"
            f"{' — ' + html.escape(c['detail']) if c.get('detail') else ''}"
            f"{' — error: ' + html.escape(c['error']) if c.get('error') else ''}"
            f"{' — judge: ' + html.escape(_clip(c['judge_reasoning'])) if c.get('judge_reasoning') else ''}</li>"
            for c in r["checks"]
        )
        error = f"<div>error: {html.escape(r['error'])}</div>" if r.get("error") else ""
        if r.get("output_chars"):
            error = f"<div><small>clipped in baseline.json: {r['output_chars']} characters in all</small></div>{error}"
        parts.append(
            f"<div>repeat {r['repeat']}: {_status(r['status'])}</div>{_pre(_output_text(r['output']))}{error}"
            f'<ul style="margin:2px 0 8px 16px;padding:0">{checks}</ul>'
        )
    return "".join(parts) or "<p><i>no rows for this case</i></p>"


def flipped_case_html(case: FlippedCase) -> str:
    """The case as escaped HTML: its input, then before (A) and after (B) side by side."""
    given = "(the suite is not at hand: input unknown)" if case.input is None else case.input
    text = given if isinstance(given, str) else json.dumps(given, ensure_ascii=False, indent=2)
    head = (
        f"<h4>{html.escape(case.case_id)} · {html.escape(case.slice or '')} · {html.escape(case.direction)} "
        f"(pass share {case.mean_a:.0%} → {case.mean_b:.0%})</h4>"
    )
    cell = 'style="vertical-align:top;width:50%;padding:4px 8px;border-top:1px solid #ccd"'
    return (
        f"{head}<div><b>input</b></div>{_pre(text)}"
        '<table style="border-collapse:collapse;width:100%;font-size:13px"><tr>'
        f"<th {cell}>before: <code>{html.escape(case.a.run_id)}</code></th>"
        f"<th {cell}>after: <code>{html.escape(case.b.run_id)}</code></th></tr>"
        f"<tr><td {cell}>{_side_html(case.a)}</td><td {cell}>{_side_html(case.b)}</td></tr></table>"
    )


class FlippedCases(widgets.VBox):
    """The flipped cases of `run` against `other` (regressions first); picking one shows both sides.

    `other` is what `run.compare` takes: a Run, a run directory, a baseline.json or a suite folder.
    """

    def __init__(self, run: Run, other: Run | str | Path) -> None:
        self.run = run
        self.comparison = run.compare(other)
        self.flipped = flipped_order(self.comparison.flipped())
        self._rows = run.checks()
        try:
            self._inputs = {c.id: c.input for c in run.suite.cases}
        except EvalkitError:  # the suite moved since the run: outputs and verdicts still show
            self._inputs = {}
        s = self.comparison.summary()
        self.header = widgets.HTML(
            f"<p><b>{self.flipped.height}</b> flipped cases of <code>{html.escape(s['run_b'])}</code> against "
            f"<code>{html.escape(s['run_a'])}</code>: {s['pass_to_fail']} pass→fail (listed first), "
            f"{s['fail_to_pass']} fail→pass. Pick one to see its input, both outputs and every check.</p>"
        )
        options = [
            (f"{r['direction']} · {r['slice']} · {r['case_id']}", r["case_id"])
            for r in self.flipped.iter_rows(named=True)
        ]
        self.picker = widgets.Select(
            options=options, value=None, rows=min(10, max(len(options), 1)), layout={"width": "460px"}
        )
        self.detail = widgets.HTML(self._prompt())
        self.selected: str | None = None
        self.case: FlippedCase | None = None
        self.picker.observe(self._on_pick, names="value")
        super().__init__([self.header, self.picker, self.detail])

    def _prompt(self) -> str:
        if self.flipped.is_empty():
            return "<p>No case changed its verdict.</p>"
        return "<p><i>Pick a case above.</i></p>"

    def _on_pick(self, change: dict[str, Any]) -> None:
        self._show(change["new"])

    def _show(self, case_id: str | None) -> None:
        self.selected = case_id
        if case_id is None:
            self.case = None
            self.detail.value = self._prompt()
            return
        self.case = flipped_case(self.comparison, self._rows, case_id, case_input=self._inputs.get(case_id))
        self.detail.value = flipped_case_html(self.case)

    def select(self, case_id: str | None) -> None:
        """Show `case_id` (None: nothing), as picking it in the list does."""
        if case_id is not None and case_id not in self.flipped.get_column("case_id").to_list():
            raise ValueError(f"{case_id!r} is not a flipped case here; the flipped cases are in .flipped")
        self.picker.value = case_id
