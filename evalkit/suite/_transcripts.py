"""Candidates from traffic: read a transcript file (JSONL or CSV) and promote chosen rows to golden cases."""

from __future__ import annotations

import csv
import dataclasses
import difflib
import io
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from evalkit.errors import Problem, TranscriptError
from evalkit.suite._cases import GRADERS, Case, decode_line, parse_case


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One row of a transcript: an input the system saw, optionally its answer and when."""

    id: str
    input: Any
    answer: Any = None
    timestamp: str | None = None
    file: str = ""
    line: int = 0
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def where(self) -> str:
        """``file:line``: where the row is, as a case's source records it."""
        return f"{self.file}:{self.line}"


def _rows_jsonl(shown: str, text: str) -> tuple[list[tuple[int, Any]], list[Problem]]:
    rows, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        obj, bad = decode_line(line)
        if bad is not None:
            problems.append(Problem(shown, number, bad[0], bad[1], bad[2]))
        else:
            rows.append((number, obj))
    return rows, problems


def _rows_csv(shown: str, text: str) -> tuple[list[tuple[int, Any]], list[Problem]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[tuple[int, Any]] = []
    problems: list[Problem] = []
    start = 2  # the header is line 1; a quoted value may span lines, so a row starts after the last one ended
    try:
        for row in reader:
            if None in row:  # more values than the header has columns
                problems.append(
                    Problem(
                        shown,
                        start,
                        "(row)",
                        f"{len(row[None]) + len(reader.fieldnames or [])} values for "
                        f"{len(reader.fieldnames or [])} columns",
                        "quote values that contain commas",
                    )
                )
            else:
                rows.append((start, dict(row)))
            start = reader.line_num + 1
    except csv.Error as exc:
        problems.append(
            Problem(shown, reader.line_num, "(csv)", f"unreadable CSV: {exc}", "check the quoting")
        )
    return rows, problems


def read_transcripts(
    path: str | Path,
    *,
    input_fields: str | Sequence[str] = "input",
    answer_field: str | None = "answer",
    time_field: str | None = "timestamp",
    id_field: str | None = "id",
) -> list[Candidate]:
    """Read a file of real traffic, one row per request, as candidates for golden cases.

    Parameters
    ----------
    path:
        A ``.jsonl`` file (one JSON object per line) or a ``.csv`` file with a header row.
    input_fields:
        Where a row's input is: one field name (the input is that field's value), or several (the input is
        an object of those fields, in this order). Every row must have them.
    answer_field, time_field, id_field:
        The fields holding the system's answer, an ISO 8601 timestamp and the row's id; each optional in a
        row (None: not read). A row without an id gets ``<file stem>-<line>``.

    Returns
    -------
    list[Candidate]
        One per row, in file order; fields not named above are kept in ``extra``.

    Raises
    ------
    TranscriptError
        With every problem, at its file and line: unreadable file, bad JSON, a row that is not an object, a
        missing input field, a timestamp that is not ISO 8601, a repeated id.
    """
    p = Path(path)
    shown = str(p)
    suffix = p.suffix.lower()
    if suffix not in (".jsonl", ".ndjson", ".csv"):
        raise TranscriptError(
            [Problem(shown, None, "(file)", f"unknown transcript format {suffix!r}", "use .jsonl or .csv")]
        )
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TranscriptError(
            [
                Problem(
                    shown,
                    None,
                    "(file)",
                    f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                    "save as UTF-8",
                )
            ]
        ) from None
    except OSError as exc:
        raise TranscriptError(
            [Problem(shown, None, "(file)", f"cannot read: {exc.strerror}", "check the path")]
        ) from None
    rows, problems = _rows_csv(shown, text) if suffix == ".csv" else _rows_jsonl(shown, text)
    if not rows and not problems:
        problems.append(
            Problem(shown, None, "(file)", "no rows", "one request per line (JSONL) or row (CSV)")
        )
    fields = [input_fields] if isinstance(input_fields, str) else list(input_fields)
    named = {f for f in (*fields, answer_field, time_field, id_field) if f}
    out: list[Candidate] = []
    seen: dict[str, int] = {}
    for number, row in rows:
        if not isinstance(row, dict):
            problems.append(
                Problem(
                    shown,
                    number,
                    "(row)",
                    f"a row is an object, got {type(row).__name__}",
                    "one object per line",
                )
            )
            continue
        missing = [f for f in fields if f not in row]
        if missing:
            near = difflib.get_close_matches(missing[0], list(row), n=1, cutoff=0.6)
            hint = f"did you mean {near[0]!r}? " if near else ""
            problems.append(
                Problem(
                    shown,
                    number,
                    ", ".join(missing),
                    "input field missing",
                    f"{hint}this row has {', '.join(map(repr, row)) or 'no fields'}; name the input with input_fields=",
                )
            )
            continue
        stamp = row.get(time_field) if time_field else None
        if stamp not in (None, ""):
            try:
                datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
            except ValueError:
                problems.append(
                    Problem(
                        shown,
                        number,
                        str(time_field),
                        f"not an ISO 8601 time: {stamp!r}",
                        "write 2025-03-01T14:05:00Z",
                    )
                )
                continue
        raw_id = row.get(id_field) if id_field else None
        cid = str(raw_id) if raw_id not in (None, "") else f"{p.stem}-{number}"
        if cid in seen:
            problems.append(
                Problem(
                    shown,
                    number,
                    id_field or "(row)",
                    f"duplicate id {cid!r} (first on line {seen[cid]})",
                    "give each row its own id",
                )
            )
            continue
        seen[cid] = number
        value = row[fields[0]] if isinstance(input_fields, str) else {f: row[f] for f in fields}
        out.append(
            Candidate(
                id=cid,
                input=value,
                answer=row.get(answer_field) if answer_field else None,
                timestamp=None if stamp in (None, "") else str(stamp),
                file=p.name,
                line=number,
                extra={k: v for k, v in row.items() if k not in named},
            )
        )
    if problems:
        raise TranscriptError(problems)
    return out


def _per(value: Any, cand: Candidate, what: str) -> Any:
    if callable(value):
        return value(cand)
    if isinstance(value, Mapping):
        if cand.id not in value:
            raise TranscriptError(
                [
                    Problem(
                        cand.file,
                        cand.line,
                        what,
                        f"no {what} given for candidate {cand.id!r}",
                        f"add {cand.id!r} to the {what} mapping",
                    )
                ]
            )
        return value[cand.id]
    return value


def promote(
    candidates: Sequence[Candidate],
    ids: Sequence[str] | Mapping[str, str],
    *,
    expected: Mapping[str, Any] | Callable[[Candidate], Any],
    grader: str = "exact",
    slice: str | Mapping[str, str] | Callable[[Candidate], str] = "unsliced",
    source: str = "transcript",
    normalize: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
) -> list[Case]:
    """Turn chosen candidates into valid golden cases in the one-grader form (``grader`` + ``expected``).

    Parameters
    ----------
    candidates:
        From :func:`read_transcripts`.
    ids:
        The candidates to promote, by id, in the order wanted; a mapping gives each its new case id
        (``{"t-0003": "tri-160"}``), else the case keeps the candidate's id.
    expected:
        What each case expects: a mapping from candidate id, or a function of the candidate (e.g.
        ``lambda c: c.answer`` once the answers have been checked by a person).
    grader:
        One of exact, schema, contains, code, judge (default exact).
    slice:
        The slice: one for all, a mapping from candidate id, or a function of the candidate.
    source:
        What the rows are (default ``"transcript"``); each case's source is ``"<source>: <file>:<line>"``.
    normalize, tags:
        Optional ``normalize`` (for exact) and ``tags`` keys of the new cases.

    Returns
    -------
    list[Case]
        Valid cases; each remembers its one-grader form, so saving writes it that way.

    Raises
    ------
    TranscriptError
        An unknown candidate id, a missing expected value or slice, or a case that does not validate, each
        located at the candidate's file and line.
    """
    if grader not in GRADERS:
        raise ValueError(f"unknown grader {grader!r}; use one of {', '.join(GRADERS)}")
    by_id = {c.id: c for c in candidates}
    names = dict(ids) if isinstance(ids, Mapping) else {i: i for i in ids}
    unknown = [i for i in names if i not in by_id]
    if unknown:
        near = difflib.get_close_matches(unknown[0], list(by_id), n=1)
        raise TranscriptError(
            [
                Problem(
                    "(candidates)",
                    None,
                    "ids",
                    f"no candidate {i!r}",
                    f"did you mean {near[0]!r}?"
                    if near and i == unknown[0]
                    else "use ids from read_transcripts",
                )
                for i in unknown
            ]
        )
    out: list[Case] = []
    problems: list[Problem] = []
    for cid, new_id in names.items():
        cand = by_id[cid]
        record: dict[str, Any] = {
            "id": new_id,
            "input": cand.input,
            "expected": _per(expected, cand, "expected"),
            "grader": grader,
        }
        if normalize:
            record["normalize"] = list(normalize)
        record["slice"] = _per(slice, cand, "slice")
        record["source"] = f"{source}: {cand.where}"
        if tags:
            record["tags"] = list(tags)
        case, found = parse_case(json.loads(json.dumps(record)), cand.file, cand.line)
        problems.extend(found)
        if case is not None:
            out.append(case)
    if problems:
        raise TranscriptError(problems)
    return out
