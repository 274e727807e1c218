"""Human labels of a run's outputs: one JSONL line per (case, check, output) a person judged.

```json
{"case_id": "rpq-001", "check": "faithfulness", "output_hash": "d18dcfddaf676c4e", "passed": false,
 "criteria": [{"criterion": "Every claim is supported by the cited chunks", "met": false}],
 "reason": "...", "rater": "ana", "date": "2026-11-29"}
```

A label belongs to one output (its hash): when the system's output changes, the label no longer applies. A file
is a log: a later line for the same (case, check, output) and rater replaces an earlier one, so a labeller appends
one line per action and two labellers on one file lose nothing.
``passed`` null with ``skipped`` true is a skip (looked at, no verdict); ``passed`` null alone is not labelled
yet (only some criteria are); a criterion's ``met`` null is not labelled yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit._records import append_jsonl, locked, mend_tail, read_jsonl, write_jsonl
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
        The labels, one per (case, check, output) and rater: a later line replaces an earlier one (the file is a
        log of actions). Raises `RecordsError` listing every bad line (file:line, field, what to do).
    """
    problems: list[Problem] = []
    latest: dict[tuple[LabelKey, str], Label] = {}
    where = str(path)
    for line, obj in read_jsonl(path, problems):
        try:
            label = Label.model_validate(obj)
        except ValidationError as exc:
            problems.extend(_problems(exc, where, line))
            continue
        latest[(label.key, label.rater)] = label
    if problems:
        raise RecordsError(problems)
    return list(latest.values())


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


_COMPACT_AT = 200
"""Lines in a labels file before a save may compact it (when most of them are replaced labels)."""


class LabelsFile:
    """A labels file being written one action at a time: each action is appended as one line and synced.

    Closing a notebook loses nothing, and opening the same file again resumes where it stopped. Two labellers on
    one file (two raters, or one rater in two notebooks) each append under the file's lock, so no saved action
    is lost; the file is compacted (one line per label) once replaced lines outnumber the labels.
    """

    def __init__(self, path: str | Path, *, rater: str) -> None:
        self.path = Path(path)
        self.rater = rater
        self._labels: dict[tuple[LabelKey, str], Label] = {}
        self._lines = 0
        if self.path.exists():
            with locked(self.path):
                mend_tail(self.path)  # a save killed mid-line left a torn tail: that action was never saved
            self._reload()

    def _reload(self) -> None:
        self._labels = {(label.key, label.rater): label for label in read_labels(self.path)}
        self._lines = self.path.read_bytes().count(b"\n")

    def get(self, key: LabelKey) -> Label | None:
        """This rater's label of `key`, if any."""
        return self._labels.get((key, self.rater))

    def put(self, label: Label) -> None:
        """Record `label` (replacing this rater's earlier one for the same output): one line appended, synced."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_jsonl(self.path, _written(label))
        self._labels[(label.key, label.rater)] = label
        self._lines += 1
        if self._lines > max(_COMPACT_AT, 2 * len(self._labels)):
            self.compact()

    def compact(self) -> None:
        """Rewrite the file with one line per label (every rater's, the latest of each), under its lock."""
        with locked(self.path):
            mend_tail(self.path)
            write_labels(self.path, read_labels(self.path))
        self._reload()

    def labels(self, *, rater: str | None = None) -> list[Label]:
        """Every label in the file (of one rater, when given)."""
        return [lab for lab in self._labels.values() if rater is None or lab.rater == rater]
