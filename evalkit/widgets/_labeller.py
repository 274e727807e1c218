"""`Labeller`: label a run's judged outputs one at a time, keyboard first, every action saved at once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from evalkit.calibration import (
    KAPPA_MIN_ITEMS,
    CriterionLabel,
    Label,
    LabelItem,
    LabelsFile,
    cohen_kappa_labels,
    label_items,
)

if TYPE_CHECKING:
    from evalkit.api import Run

_HERE = Path(__file__).parent
_CYCLE = {
    None: True,
    True: False,
    False: None,
}  # a criterion's toggle: unlabelled -> met -> not met -> unlabelled


class Labeller(anywidget.AnyWidget):
    """Shows one output beside its input and rubric; keys (or buttons) record pass, fail, skip and criteria.

    Each action rewrites the labels file atomically, so closing the notebook loses nothing, and a Labeller
    opened on the same file starts at the first output not labelled yet. `act` does what a key press does,
    for code and tests.
    """

    _esm = _HERE / "_labeller.js"
    _css = _HERE / "_labeller.css"

    item = traitlets.Dict().tag(sync=True)
    label = traitlets.Dict().tag(sync=True)
    index = traitlets.Int(0).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    labelled = traitlets.Int(0).tag(sync=True)
    kappa = traitlets.Unicode("").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self, items: Sequence[LabelItem], path: str | Path, *, rater: str, min_for_kappa: int = 10
    ) -> None:
        super().__init__()
        self._items = list(items)
        self._file = LabelsFile(path, rater=rater)
        self._min_for_kappa = min_for_kappa
        self.total = len(self._items)
        self.on_msg(self._on_msg)
        first = next((i for i, it in enumerate(self._items) if not self._done(it)), 0)
        self._show(first)

    @classmethod
    def from_run(
        cls, run: Run, path: str | Path, *, rater: str, check: str | None = None, judged_first: bool = False
    ) -> Labeller:
        """A labeller over every judged output of `run` (one judged check, when named); with `judged_first`, the
        outputs the judge gave a verdict on come first, its passes and fails taking turns."""
        items = label_items(run.checks(), run.suite, check=check, judged_first=judged_first)
        return cls(items, path, rater=rater)

    # -- what the front end (or a test) does ------------------------------------------------------------

    def act(self, action: str, *, criterion: int | None = None, text: str | None = None) -> None:
        """Do what a key press does: pass, fail, skip, next, back, toggle (a criterion), reason (its text)."""
        if not self._items:
            return
        if action in ("pass", "fail", "skip"):
            self._save(verdict=({"pass": True, "fail": False, "skip": None}[action], action == "skip"))
            self._show(min(self.index + 1, len(self._items) - 1))
        elif action == "next":
            self._show(min(self.index + 1, len(self._items) - 1))
        elif action == "back":
            self._show(max(self.index - 1, 0))
        elif action == "toggle" and criterion is not None:
            rubric = self._items[self.index].rubric
            if 0 <= criterion < len(rubric):
                marks = self._marks()
                marks[criterion] = _CYCLE[marks[criterion]]
                self._save(criteria=marks)
        elif action == "reason" and text is not None:
            self._save(reason=text)
        else:
            self.message = f"unknown action {action!r}"

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and isinstance(content.get("action"), str):
            criterion = content.get("criterion")
            text = content.get("text")
            self.act(
                content["action"],
                criterion=criterion if isinstance(criterion, int) else None,
                text=text if isinstance(text, str) else None,
            )

    # -- state --------------------------------------------------------------------------------------------

    def labels(self) -> list[Label]:
        """This rater's labels so far."""
        return self._file.labels(rater=self._file.rater)

    def _done(self, item: LabelItem) -> bool:
        label = self._file.get(item.key)
        return label is not None and (label.passed is not None or label.skipped)

    def _marks(self) -> list[bool | None]:
        item = self._items[self.index]
        label = self._file.get(item.key)
        given = {c.criterion: c.met for c in label.criteria} if label else {}
        return [given.get(c) for c in item.rubric]

    def _save(
        self,
        *,
        verdict: tuple[bool | None, bool] | None = None,
        criteria: list[bool | None] | None = None,
        reason: str | None = None,
    ) -> None:
        item = self._items[self.index]
        old = self._file.get(item.key)
        marks = criteria if criteria is not None else self._marks()
        label = Label(
            case_id=item.case_id,
            check=item.check,
            output_hash=item.output_hash,
            passed=verdict[0] if verdict else (old.passed if old else None),
            skipped=verdict[1] if verdict else (old.skipped if old else False),
            criteria=[CriterionLabel(criterion=c, met=m) for c, m in zip(item.rubric, marks, strict=True)],
            reason=(old.reason if old else "") if reason is None else reason,
            rater=self._file.rater,
            date=datetime.now(UTC).date().isoformat(),
        )
        try:
            self._file.put(label)
        except OSError as exc:  # a full disk or a read-only folder: say so where the person is looking
            self.message = f"NOT SAVED: {exc}"
            return
        self.message = f"saved to {self._file.path}"
        self._refresh()

    def _show(self, index: int) -> None:
        self.index = index
        self._refresh()

    def _refresh(self) -> None:
        if not self._items:
            self.item, self.label = {}, {}
            return
        item = self._items[self.index]
        label = self._file.get(item.key)
        self.item = {
            "case_id": item.case_id,
            "check": item.check,
            "slice": item.slice,
            "input": item.input,
            "output": item.output,
            "rubric": item.rubric,
            "judge_passed": item.judge_passed,
            "judge_reasoning": item.judge_reasoning,
        }
        self.label = {
            "passed": label.passed if label else None,
            "skipped": label.skipped if label else False,
            "criteria": self._marks(),
            "reason": label.reason if label else "",
        }
        self.labelled = sum(self._done(it) for it in self._items)
        self.kappa = self._kappa()

    def _kappa(self) -> str:
        pairs = []
        for it in self._items:
            label = self._file.get(it.key)
            if label is not None and label.passed is not None and it.judge_passed is not None:
                pairs.append((label.passed, it.judge_passed))
        if len(pairs) < self._min_for_kappa:
            return f"kappa after {self._min_for_kappa} labels the judge also scored ({len(pairs)} so far)"
        human, judge = [h for h, _ in pairs], [j for _, j in pairs]
        alone = [who for who, said in (("you", human), ("the judge", judge)) if len(set(said)) == 1]
        if alone:
            # kappa is 0 or 0/0 by its formula when a rater says one thing: not a measure of agreement
            return (
                f"judge vs you: kappa undefined on {len(pairs)} ({' and '.join(alone)} gave one label only)"
            )
        value = cohen_kappa_labels(human, judge)
        shown = "undefined" if value is None else f"{value:.2f}"
        few = f" (rough: fewer than {KAPPA_MIN_ITEMS} labels)" if len(pairs) < KAPPA_MIN_ITEMS else ""
        return f"judge vs you: kappa {shown} on {len(pairs)}{few}"
