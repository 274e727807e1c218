"""The ratings file: one rating per JSONL line, read into a polars frame with every bad line located."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from evalkit._records import read_jsonl, write_jsonl
from evalkit.errors import Problem, RecordsError

_REQUIRED = ("item", "rater", "value")
_OPTIONAL = ("criterion", "slice", "reason", "date")
_KNOWN = frozenset(_REQUIRED + _OPTIONAL)

SCHEMA: dict[str, Any] = {
    "item": pl.String,
    "rater": pl.String,
    "value": pl.String,
    "kind": pl.String,
    "number": pl.Float64,
    "criterion": pl.String,
    "slice": pl.String,
    "reason": pl.String,
    "date": pl.String,
    "file": pl.String,
    "line": pl.Int64,
}


def label_of(value: bool | int | str) -> tuple[str, str, float | None]:
    """The string label, the kind ("bool", "int" or "str") and the number by which ordinal labels sort."""
    if isinstance(value, bool):
        return ("true" if value else "false"), "bool", float(value)
    if isinstance(value, int):
        return str(value), "int", float(value)
    return value, "str", None


def _check(obj: dict[str, Any], where: str, line: int, problems: list[Problem]) -> bool:
    ok = True
    for name in _REQUIRED:
        if name not in obj:
            problems.append(Problem(where, line, name, "missing", f'add "{name}" to this rating'))
            ok = False
    for name in ("item", "rater"):
        if name in obj and (not isinstance(obj[name], str) or not obj[name].strip()):
            problems.append(Problem(where, line, name, "must be a non-empty string", f"quote the {name} id"))
            ok = False
    value = obj.get("value")
    if "value" in obj and value is not None and not isinstance(value, bool | int | str):
        problems.append(
            Problem(
                where,
                line,
                "value",
                f"a {type(value).__name__} ({value!r}) is not a rating",
                "use true/false, an integer or a string label; null for no verdict",
            )
        )
        ok = False
    for name in _OPTIONAL:
        if obj.get(name) is not None and not isinstance(obj[name], str):
            problems.append(
                Problem(where, line, name, "must be a string", f"quote the {name}, or leave it out")
            )
            ok = False
    for name in sorted(set(obj) - _KNOWN):
        problems.append(
            Problem(
                where,
                line,
                name,
                "unknown field",
                f"a rating has only {', '.join(_REQUIRED + _OPTIONAL)}; remove or rename it",
            )
        )
        ok = False
    return ok


def read_ratings(*paths: str | Path) -> pl.DataFrame:
    """Read one or more ratings files into one frame.

    Parameters
    ----------
    paths:
        JSONL files, one rating per line: ``item``, ``rater``, ``value`` (bool, integer, string, or null
        for no usable verdict) and optional ``criterion``, ``slice``, ``reason``, ``date``.

    Returns
    -------
    A frame with columns item, rater, value (string label, null when missing), kind (bool/int/str),
    number (the numeric value of bool and int labels, for ordinal order), criterion, slice, reason,
    date, file, line.

    Raises
    ------
    RecordsError
        Listing every bad line as ``file:line: field: problem``, including a rater's second rating of
        the same (item, criterion), which names both lines.
    """
    problems: list[Problem] = []
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str | None], str] = {}
    for path in paths:
        where = str(path)
        found, before = len(rows), len(problems)
        for line, obj in read_jsonl(path, problems):
            if not _check(obj, where, line, problems):
                continue
            key = (obj["item"], obj["rater"], obj.get("criterion"))
            here = f"{where}:{line}"
            if key in seen:
                crit = f", criterion {key[2]!r}" if key[2] is not None else ""
                problems.append(
                    Problem(
                        where,
                        line,
                        "item",
                        f"rater {key[1]!r} already rated item {key[0]!r}{crit} at {seen[key]}",
                        "keep one rating per rater, item and criterion",
                    )
                )
                continue
            seen[key] = here
            value = obj["value"]
            label, kind, number = label_of(value) if value is not None else (None, None, None)
            rows.append(
                {
                    "item": obj["item"],
                    "rater": obj["rater"],
                    "value": label,
                    "kind": kind,
                    "number": number,
                    **{name: obj.get(name) for name in _OPTIONAL},
                    "file": where,
                    "line": line,
                }
            )
        if len(rows) == found and len(problems) == before:
            problems.append(Problem(where, None, "file", "holds no ratings", "write one rating per line"))
    if problems:
        raise RecordsError(problems)
    return pl.DataFrame(rows, schema=SCHEMA, orient="row") if rows else pl.DataFrame(schema=SCHEMA)


def _original(row: Mapping[str, Any]) -> bool | int | str | None:
    # a frame row carries the label as text; the kind restores the type the file had
    value = row.get("value")
    kind = row.get("kind")
    if value is None or kind is None:
        return value if not isinstance(value, float) else int(value)
    if kind == "bool":
        return value == "true" if isinstance(value, str) else bool(value)
    if kind == "int":
        return int(value)
    return str(value)


def write_ratings(path: str | Path, rows: Iterable[Mapping[str, Any]] | pl.DataFrame) -> Path:
    """Write ratings atomically (temporary file, fsync, rename in the same folder).

    Parameters
    ----------
    path:
        Destination ratings file.
    rows:
        Mappings with item, rater, value (bool/int/str/None) and optional criterion, slice, reason,
        date; or a frame from `read_ratings`, whose kind column restores each value's type.

    Returns
    -------
    The path written.
    """
    source = rows.iter_rows(named=True) if isinstance(rows, pl.DataFrame) else rows

    def records() -> Iterable[dict[str, Any]]:
        for row in source:
            out: dict[str, Any] = {"item": row["item"], "rater": row["rater"]}
            out["value"] = _original(row) if "kind" in row else row.get("value")
            for name in _OPTIONAL:
                if row.get(name) is not None:
                    out[name] = row[name]
            yield out

    return write_jsonl(path, records())
