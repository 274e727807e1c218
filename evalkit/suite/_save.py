"""Saving a new version of a suite: validate every case first, keep each case's written form, show the diff."""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalkit._fs import atomic_write_text
from evalkit.errors import Problem, SuiteValidationError
from evalkit.suite._cases import (
    Case,
    case_line,
    cases_version,
    decode_line,
    parse_case,
    read_cases,
    written_form,
)
from evalkit.suite._load import _cross_check
from evalkit.suite._suite import Suite

Entry = Case | Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class SaveResult:
    """What a save did: the version before and after, the unified diff of the file, where it was written.

    `suite` is the suite as saved, to go on editing from.
    """

    old_version: str
    new_version: str
    diff: str
    path: Path
    suite: Suite

    @property
    def version_changed(self) -> bool:
        """False when only what the version ignores changed (notes, source, tags, line order, form)."""
        return self.old_version != self.new_version

    def __str__(self) -> str:
        body = [ln for ln in self.diff.splitlines() if not ln.startswith(("+++", "---"))]
        added = sum(ln.startswith("+") for ln in body)
        removed = sum(ln.startswith("-") for ln in body)
        change = (
            f"version {self.old_version} -> {self.new_version}"
            if self.version_changed
            else f"version {self.new_version} (unchanged)"
        )
        return f"{self.path}: {change}; lines +{added} -{removed}"


def _check_entries(
    suite: Suite, entries: Sequence[Entry], shown: str
) -> tuple[list[Case], list[str], list[Problem]]:
    """Each entry as a case and its line in the new file, with every problem located at that line."""
    cases: list[Case] = []
    texts: list[str] = []
    problems: list[Problem] = []
    first: dict[str, int] = {}
    if not entries:
        problems.append(Problem(shown, None, "(file)", "no cases", "a suite needs at least one case"))
    for number, entry in enumerate(entries, start=1):
        if isinstance(entry, Case):
            case: Case | None = entry
        elif isinstance(entry, Mapping):
            obj = dict(entry)
            case, found = parse_case(obj, shown, number)
            problems.extend(found)
        else:
            problems.append(
                Problem(
                    shown,
                    number,
                    "(case)",
                    f"not a case: {type(entry).__name__}",
                    "give a Case or a case's JSON object",
                )
            )
            continue
        if case is None:
            continue
        if case.id in first:
            problems.append(
                Problem(
                    shown,
                    number,
                    "id",
                    f"duplicate id {case.id!r} (first used on line {first[case.id]})",
                    "ids must be unique within a suite; rename one",
                )
            )
            continue
        first[case.id] = number
        try:
            text = case_line(case)
        except (TypeError, ValueError) as exc:  # an input holding a set, bytes or a circular reference
            problems.append(
                Problem(shown, number, "(case)", f"cannot be written as JSON: {exc}", "use JSON values only")
            )
            continue
        # what is written must read back as this very case, or the next load would differ from what was checked
        decoded, bad = decode_line(text)
        again = parse_case(decoded, shown, number)[0] if bad is None else None
        if again != case:
            problems.append(
                Problem(
                    shown,
                    number,
                    bad[0] if bad else "(case)",
                    bad[1] if bad else "does not read back as the same case",
                    bad[2] if bad else "write it as a case object",
                )
            )
            continue
        cases.append(case)
        texts.append(text)
    if not problems:
        probe = dataclasses.replace(suite, cases=cases)
        problems.extend(_cross_check(probe, first, shown, None))
    return cases, texts, problems


def _changed_on_disk(suite: Suite, target: Path) -> Problem | None:
    """The file was changed since `suite` was read from it: saving over it would lose that change."""
    if target.resolve() != suite.cases_file.resolve() or not target.exists():
        return None
    found, problems = read_cases(target, str(target))
    there = cases_version([c for _, c in found], extra=suite.output_schema) if not problems else "unreadable"
    if there == suite.version:
        return None
    return Problem(
        str(target),
        None,
        "(file)",
        f"changed since this suite was loaded (version {there} on disk, {suite.version} loaded)",
        "load the suite again and redo the edit, or save to another path",
    )


def save_new_version(suite: Suite, cases: Sequence[Entry], *, path: str | Path | None = None) -> SaveResult:
    """Write `cases` as the suite's new version, atomically, after checking every one of them.

    Parameters
    ----------
    suite:
        The suite as loaded; its cases file is replaced unless `path` is given.
    cases:
        The whole new list, in the order to write: each a :class:`Case` or a case's JSON object. A case
        unchanged since it was read is written back as its very line; a new or edited one in the form it was
        given (an object as written, in its key order; a Case parsed from one likewise; any other Case in the
        multi-check form).
    path:
        Where to write (default: the suite's cases file).

    Returns
    -------
    SaveResult
        The old and new versions, the unified diff of the file, the path and the saved suite.

    Raises
    ------
    SuiteValidationError
        With every problem, located at its line in the file that would have been written, when any case is
        invalid, two share an id, or the cases file changed on disk since the suite was loaded. Nothing is
        written then.
    """
    target = Path(path) if path is not None else suite.cases_file
    shown = str(target)
    new_cases, texts, problems = _check_entries(suite, cases, shown)
    stale = _changed_on_disk(suite, target)
    if stale is not None:
        problems.append(stale)
    if problems:
        raise SuiteValidationError(problems)
    old_text = target.read_text(encoding="utf-8") if target.exists() else ""
    new_text = "".join(t + "\n" for t in texts)
    new_version = cases_version(new_cases, extra=suite.output_schema)
    diff = "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=f"{target.name} @ {suite.version}",
            tofile=f"{target.name} @ {new_version}",
            n=0,  # one line is one case: context lines would be whole other cases
        )
    )
    atomic_write_text(target, new_text)
    saved = dataclasses.replace(
        suite, cases=new_cases, cases_file=target, lines={c.id: i for i, c in enumerate(new_cases, start=1)}
    )
    return SaveResult(old_version=suite.version, new_version=new_version, diff=diff, path=target, suite=saved)


def with_case(suite: Suite, case: Case, *, replacing: str | None = None) -> list[Case]:
    """The suite's cases with `case` in the place of case `replacing` (default: the one with its id), or added
    at the end when there is none."""
    target = replacing if replacing is not None else case.id
    out = list(suite.cases)
    for i, c in enumerate(out):
        if c.id == target:
            out[i] = case
            return out
    return [*out, case]


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def next_case_id(suite: Suite) -> str:
    """An unused id following the suite's most common `prefix-NNN` pattern (``tri-160`` after ``tri-159``)."""
    ids = {c.id for c in suite.cases}
    found = [m for m in (_NUMBERED.match(i) for i in ids) if m]
    if not found:
        n = len(ids) + 1
        while f"case-{n}" in ids:
            n += 1
        return f"case-{n}"
    prefix = Counter(m.group(1) for m in found).most_common(1)[0][0]
    numbers = [m.group(2) for m in found if m.group(1) == prefix]
    width = max(len(n) for n in numbers)
    n = max(int(x) for x in numbers) + 1
    while f"{prefix}{n:0{width}d}" in ids:
        n += 1
    return f"{prefix}{n:0{width}d}"


def _blank_strings(value: Any) -> Any:
    if isinstance(value, str):
        return ""
    if isinstance(value, dict):
        return {k: _blank_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank_strings(v) for v in value]
    return value


def new_case_template(suite: Suite) -> dict[str, Any]:
    """A new case to fill in, in the form of the suite's last case: a fresh id, the text of its input and of its
    expected values blanked, and no slice, source, split or notes of another case."""
    if not suite.cases:
        return {"id": "case-1", "input": "", "checks": [{"kind": "exact", "expected": ""}]}
    last = suite.cases[-1]
    form = dict(written_form(last) or last.to_record())
    form["id"] = next_case_id(suite)
    form["input"] = _blank_strings(form.get("input"))
    # what a case says of itself is the new case's to give: the last case's answer, slice and source are not
    for key in ("expected", "expected_exact", "must_contain"):
        if key in form:
            form[key] = _blank_strings(form[key])
    if isinstance(form.get("checks"), list):
        form["checks"] = [
            {k: (_blank_strings(v) if k in ("expected", "any_of", "facts") else v) for k, v in check.items()}
            if isinstance(check, dict)
            else check
            for check in form["checks"]
        ]
    for key in ("notes", "split", "slice", "source", "tags"):
        form.pop(key, None)
    return form


def case_object(case: Case) -> dict[str, Any]:
    """The case's JSON object as written (its form and key order), or the multi-check form."""
    return dict(written_form(case) or case.to_record())


def _json_error(text: str, where: str) -> Problem | None:
    """Where in a multi-line text the JSON breaks (line and column within the text)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return Problem(
            where,
            exc.lineno,
            "(json)",
            f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            "one JSON object: check quotes, commas and brackets",
        )
    except (RecursionError, ValueError):
        return None
    return None


def check_case_text(
    text: str, suite: Suite, *, replacing: str | None = None, where: str = "case"
) -> tuple[Case | None, list[Problem]]:
    """Validate one case's JSON text as the editor holds it: as the suite's loader would, in full.

    Parameters
    ----------
    text:
        The case's JSON (one object; may span lines).
    suite:
        The suite it goes into: its user checks, output schema and other cases' ids are checked against.
    replacing:
        The id of the case this text replaces (None: a new case), so keeping its id is not a duplicate.
    where:
        The name problems are located by (their line is the line within `text`, for JSON errors).

    Returns
    -------
    (Case or None, problems)
        The case when valid, else None and every problem found.
    """
    located = _json_error(text, where)
    if located is not None:
        return None, [located]
    obj, bad = decode_line(text.strip())
    if bad is not None:
        return None, [Problem(where, None, bad[0], bad[1], bad[2])]
    case, problems = parse_case(obj, where, 0)
    problems = [dataclasses.replace(p, line=None) for p in problems]
    if case is None:
        return None, problems
    taken = {c.id for c in suite.cases} - ({replacing} if replacing is not None else set())
    if case.id in taken:
        return None, [
            Problem(
                where,
                None,
                "id",
                f"id {case.id!r} is already used by another case",
                "give a new id, or pick that case to edit it",
            )
        ]
    probe = dataclasses.replace(suite, cases=[case])
    cross = [dataclasses.replace(p, line=None) for p in _cross_check(probe, {}, where, None)]
    return (None, cross) if cross else (case, [])
