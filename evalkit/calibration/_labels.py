"""Human labels of a run's outputs: one JSONL line per (case, check, output) a person judged.

```json
{"case_id": "rpq-001", "check": "faithfulness", "output_hash": "d18dcfddaf676c4e", "passed": false,
 "criteria": [{"criterion": "Every claim is supported by the cited chunks", "met": false}],
 "reason": "...", "rater": "ana", "date": "2026-11-29"}
```

A label belongs to one output (its hash): when the system's output changes, the label no longer applies.
``passed`` null with ``skipped`` true is a skip (looked at, no verdict); ``passed`` null alone is not labelled
yet (only some criteria are); a criterion's ``met`` null is not labelled yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit._records import read_jsonl, write_jsonl
from evalkit.errors import Problem, RecordsError

LabelKey = tuple[str, str, str]


class CriterionLabel(BaseModel):
    """A person's verdict on one rubric criterion."""

    model_config = ConfigDict(extra="forbid")

    criterion: str = Field(min_length=1)
    met: bool | None = None


class Label(BaseModel):
    """A person's verdict on one output for one check."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(min_length=1)
    check: str = Field(min_length=1)
    output_hash: str = Field(min_length=1)
    passed: bool | None = None
    criteria: list[CriterionLabel] = Field(default_factory=list)
    reason: str = ""
    rater: str = Field(min_length=1)
    date: str | None = None
    skipped: bool = False

    @property
    def key(self) -> LabelKey:
        return (self.case_id, self.check, self.output_hash)


def today() -> str:
    return datetime.now(UTC).date().isoformat()


def _problems(exc: ValidationError, where: str, line: int) -> list[Problem]:
    out = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "label"
        fix = (
            "remove it; a label has case_id, check, output_hash, passed, criteria, reason, rater, date, skipped"
            if err["type"] == "extra_forbidden"
            else "see docs/case-format.md, labels"
        )
        out.append(Problem(where, line, field, err["msg"].lower(), fix))
    return out


def read_labels(path: str | Path) -> list[Label]:
    """Every label in a labels file, in file order.

    Parameters
    ----------
    path:
        A labels JSONL file.

    Returns
    -------
    list[Label]
        The labels. Raises `RecordsError` listing every bad line (file:line, field, what to do), and a
        second label of one rater for the same (case, check, output) naming both lines.
    """
    problems: list[Problem] = []
    labels: list[Label] = []
    seen: dict[tuple[LabelKey, str], int] = {}
    where = str(path)
    for line, obj in read_jsonl(path, problems):
        try:
            label = Label.model_validate(obj)
        except ValidationError as exc:
            problems.extend(_problems(exc, where, line))
            continue
        first = seen.setdefault((label.key, label.rater), line)
        if first != line:
            problems.append(
                Problem(
                    where,
                    line,
                    "case_id",
                    f"{label.rater} already labelled {label.case_id} / {label.check} / {label.output_hash} "
                    f"on line {first}",
                    "keep one of the two lines",
                )
            )
            continue
        labels.append(label)
    if problems:
        raise RecordsError(problems)
    return labels


def write_labels(path: str | Path, labels: Iterable[Label]) -> Path:
    """Write `labels` to `path` atomically (a reader sees the old file or the new one, never a part)."""
    return write_jsonl(path, (_written(label) for label in labels))


def _written(label: Label) -> dict[str, Any]:
    out = label.model_dump(mode="json")
    if not out["skipped"]:  # the usual case says nothing, so files written by hand need not say it either
        del out["skipped"]
    return out


def label_item(key: LabelKey) -> str:
    """The ratings-file item of a labelled output: ``case_id/check/output_hash``."""
    return "/".join(key)


def labels_to_ratings(
    labels: Iterable[Label], *, slices: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Labels as ratings (one for the overall verdict, one per criterion), for `agreement` and friends.

    Parameters
    ----------
    labels:
        The labels to convert.
    slices:
        Optional case id -> slice, recorded on each rating.

    Returns
    -------
    list[dict]
        Ratings rows: item (``case_id/check/output_hash``), rater, value (null for a skip), and criterion,
        slice, reason, date where known. Nothing is dropped: a skip stays as a null value.
    """
    rows: list[dict[str, Any]] = []
    for label in labels:
        base: dict[str, Any] = {"item": label_item(label.key), "rater": label.rater}
        if slices and label.case_id in slices:
            base["slice"] = slices[label.case_id]
        if label.date:
            base["date"] = label.date
        overall = base | {"value": label.passed}
        if label.reason:
            overall["reason"] = label.reason
        rows.append(overall)
        rows.extend(base | {"value": c.met, "criterion": c.criterion} for c in label.criteria)
    return rows


class LabelsFile:
    """A labels file being written one action at a time: every change is saved at once, atomically.

    Closing a notebook loses nothing, and opening the same file again resumes where it stopped.
    """

    def __init__(self, path: str | Path, *, rater: str) -> None:
        self.path = Path(path)
        self.rater = rater
        self._labels: dict[tuple[LabelKey, str], Label] = {}
        if self.path.exists():
            for label in read_labels(self.path):
                self._labels[(label.key, label.rater)] = label

    def get(self, key: LabelKey) -> Label | None:
        """This rater's label of `key`, if any."""
        return self._labels.get((key, self.rater))

    def put(self, label: Label) -> None:
        """Record `label` (replacing this rater's earlier one for the same output) and save the file."""
        self._labels[(label.key, label.rater)] = label
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_labels(self.path, self._labels.values())

    def labels(self, *, rater: str | None = None) -> list[Label]:
        """Every label in the file (of one rater, when given)."""
        return [lab for lab in self._labels.values() if rater is None or lab.rater == rater]
