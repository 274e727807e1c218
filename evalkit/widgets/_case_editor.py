"""`CaseEditor`: edit one case's JSON, validated on every change; save a new version and see its diff."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from evalkit.errors import Problem, SuiteValidationError
from evalkit.suite import (
    Case,
    SaveResult,
    Suite,
    case_object,
    check_case_text,
    new_case_template,
    save_new_version,
    with_case,
)

NEW = "(new case)"
_STYLE = (
    "<style>.ek-case-json textarea{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}"
    ".ek-diff{white-space:pre-wrap;word-break:break-all;font-size:11px;max-height:320px;overflow:auto}</style>"
)


def problems_html(problems: list[Problem]) -> str:
    """Problems as an escaped list: line (when known), field, what is wrong and what to do."""
    items = []
    for p in problems:
        where = f"line {p.line}: " if p.line is not None else ""
        hint = f" — {html.escape(p.hint)}" if p.hint else ""
        items.append(f"<li>{where}<code>{html.escape(p.field)}</code>: {html.escape(p.message)}{hint}</li>")
    return f'<ul style="color:#c0392b;margin:4px 0">{"".join(items)}</ul>'


def diff_html(diff: str) -> str:
    """A unified diff as escaped HTML, added lines green and removed ones red."""
    lines = []
    for ln in diff.splitlines():
        colour = (
            "#1e8449"
            if ln.startswith("+") and not ln.startswith("+++")
            else "#c0392b"
            if ln.startswith("-") and not ln.startswith("---")
            else "#555"
        )
        lines.append(f'<span style="color:{colour}">{html.escape(ln)}</span>')
    return f'<pre class="ek-diff">{chr(10).join(lines) or "(no change)"}</pre>'


class CaseEditor(widgets.VBox):
    """Pick a case (or start a new one), edit its JSON, save the suite as a new version.

    The text is validated on every change as the loader would (form, checks, user checks, schema, a taken
    id); the problems show under it and Save stays disabled while there are any. Saving calls
    :func:`evalkit.suite.save_new_version`: every other case keeps its line, this one is written in the form
    its text has, and the version change and the diff show below. Drive it from code as a person would:
    ``editor.picker.value = "tri-004"``, ``editor.text.value = ...``, ``editor.save_button.click()``.
    """

    def __init__(self, suite: Suite, *, path: str | Path | None = None) -> None:
        self.suite = suite
        self.path = Path(path) if path is not None else suite.cases_file
        self.case: Case | None = None
        self.problems: list[Problem] = []
        self.last: SaveResult | None = None
        self.editing: str | None = None
        self.picker = widgets.Dropdown(options=self._options(), value=None, description="case")
        self.text = widgets.Textarea(
            layout=widgets.Layout(width="100%", height="280px"), continuous_update=True
        )
        self.text.add_class("ek-case-json")
        self.status = widgets.HTML()
        self.save_button = widgets.Button(
            description="Save new version", button_style="primary", disabled=True
        )
        self.result = widgets.HTML()
        self.picker.observe(self._picked, names="value")
        self.text.observe(self._edited, names="value")
        self.save_button.on_click(lambda _button: self.save())
        self._load(None)
        header = widgets.HTML(
            f"{_STYLE}<b>{html.escape(suite.name)}</b> · saving to <code>{html.escape(str(self.path))}</code>"
        )
        super().__init__([header, self.picker, self.text, self.status, self.save_button, self.result])

    def _options(self) -> list[tuple[str, str | None]]:
        return [(NEW, None), *((c.id, c.id) for c in self.suite.cases)]

    def _picked(self, change: dict[str, Any]) -> None:
        self._load(change["new"])

    def _load(self, case_id: str | None) -> None:
        self.editing = case_id
        obj = new_case_template(self.suite) if case_id is None else case_object(self.suite.case(case_id))
        text = json.dumps(obj, indent=2, ensure_ascii=False)
        if self.text.value == text:
            self.validate()
        else:
            self.text.value = text  # validates through the observer

    def _edited(self, _change: Any) -> None:
        self.validate()

    def validate(self) -> list[Problem]:
        """Check the text now (as every change does); returns the problems, empty when it can be saved."""
        self.case, self.problems = check_case_text(self.text.value, self.suite, replacing=self.editing)
        self.save_button.disabled = self.case is None
        if self.case is None:
            self.status.value = problems_html(self.problems)
        else:
            what = "new case" if self.editing is None else f"edits {self.editing}"
            if self.editing is not None and self.case.id != self.editing:
                what = f"renames {self.editing} to {self.case.id}"
            self.status.value = (
                f'<span style="color:#1e8449">valid</span> — {html.escape(what)}; '
                f"{len(self.case.checks)} check{'s' if len(self.case.checks) != 1 else ''}"
            )
        return self.problems

    def save(self) -> SaveResult | None:
        """What the Save button does: write the new version, or nothing while the case is invalid."""
        if self.case is None:
            self.validate()
            return None
        cases = with_case(self.suite, self.case, replacing=self.editing)
        try:
            result = save_new_version(self.suite, cases, path=self.path)
        except SuiteValidationError as exc:
            self.problems = exc.problems
            self.status.value = "<b>Not saved:</b>" + problems_html(exc.problems)
            return None
        except OSError as exc:  # a full disk or a read-only folder: say so where the person is looking
            self.status.value = f"<b>Not saved:</b> {html.escape(str(exc))}"
            return None
        self.last = result
        saved_id = self.case.id
        self.suite = result.suite
        self.picker.unobserve(self._picked, names="value")
        self.picker.options = self._options()
        self.picker.value = saved_id
        self.picker.observe(self._picked, names="value")
        self._load(saved_id)
        change = (
            f"version <code>{result.old_version}</code> → <code>{result.new_version}</code>"
            if result.version_changed
            else f"version <code>{result.new_version}</code> unchanged (only notes, source or tags changed)"
        )
        self.result.value = (
            f"<p>Saved <code>{html.escape(saved_id)}</code> to <code>{html.escape(str(result.path))}</code>: "
            f"{change}</p>{diff_html(result.diff)}"
        )
        return result
