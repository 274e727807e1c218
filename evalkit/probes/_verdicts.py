"""The pairwise verdicts file: one verdict per JSONL line, the winner in the original labels A/B."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from evalkit._records import read_jsonl, write_jsonl
from evalkit.errors import Problem, RecordsError

SCHEMA: dict[str, Any] = {
    "item": pl.String,
    "judge": pl.String,
    "shown_first": pl.String,
    "winner": pl.String,
    "file": pl.String,
    "line": pl.Int64,
}
_FIELDS = ("item", "judge", "shown_first", "winner")


def _check(obj: dict[str, Any], where: str, line: int, problems: list[Problem]) -> bool:
    ok = True
    for name in _FIELDS:
        if name not in obj:
            hint = "null if the judge gave no usable verdict" if name == "winner" else f'add "{name}"'
            problems.append(Problem(where, line, name, "missing", hint))
            ok = False
    for name in ("item", "judge"):
        if name in obj and (not isinstance(obj[name], str) or not obj[name].strip()):
            problems.append(Problem(where, line, name, "must be a non-empty string", f"quote the {name} id"))
            ok = False
    if "shown_first" in obj and obj["shown_first"] not in ("A", "B"):
        problems.append(
            Problem(
                where,
                line,
                "shown_first",
                f"{obj['shown_first']!r} is not A or B",
                "say which original output the judge saw first",
            )
        )
        ok = False
    if "winner" in obj and obj["winner"] not in ("A", "B", "tie", None):
        problems.append(
            Problem(
                where,
                line,
                "winner",
                f"{obj['winner']!r} is not A, B, tie or null",
                "give the winner in the original labels, not the shown position",
            )
        )
        ok = False
    for name in sorted(set(obj) - set(_FIELDS)):
        problems.append(
            Problem(where, line, name, "unknown field", f"a verdict has only {', '.join(_FIELDS)}")
        )
        ok = False
    return ok


def read_verdicts(*paths: str | Path) -> pl.DataFrame:
    """Read pairwise verdicts files into one frame.

    Parameters
    ----------
    paths:
        JSONL files with ``item``, ``judge``, ``shown_first`` ("A"/"B") and ``winner``
        ("A", "B", "tie", or null when the verdict could not be read).

    Returns
    -------
    A frame with columns item, judge, shown_first, winner, file, line.

    Raises
    ------
    RecordsError
        Listing every bad line, including a second verdict for the same (item, judge, shown_first),
        which names both lines.
    """
    problems: list[Problem] = []
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str], str] = {}
    for path in paths:
        where = str(path)
        found, before = len(rows), len(problems)
        for line, obj in read_jsonl(path, problems):
            if not _check(obj, where, line, problems):
                continue
            key = (obj["item"], obj["judge"], obj["shown_first"])
            if key in seen:
                problems.append(
                    Problem(
                        where,
                        line,
                        "item",
                        f"judge {key[1]!r} already judged item {key[0]!r} with {key[2]} first at {seen[key]}",
                        "keep one verdict per item, judge and order",
                    )
                )
                continue
            seen[key] = f"{where}:{line}"
            rows.append({**{k: obj[k] for k in _FIELDS}, "file": where, "line": line})
        if len(rows) == found and len(problems) == before:
            problems.append(Problem(where, None, "file", "holds no verdicts", "write one verdict per line"))
    if problems:
        raise RecordsError(problems)
    return pl.DataFrame(rows, schema=SCHEMA, orient="row") if rows else pl.DataFrame(schema=SCHEMA)


def write_verdicts(path: str | Path, rows: Iterable[Mapping[str, Any]] | pl.DataFrame) -> Path:
    """Write pairwise verdicts atomically (temporary file, fsync, rename in the same folder).

    Parameters
    ----------
    path:
        Destination file.
    rows:
        Mappings (or a frame) with item, judge, shown_first and winner.

    Returns
    -------
    The path written.
    """
    source = rows.iter_rows(named=True) if isinstance(rows, pl.DataFrame) else rows
    return write_jsonl(path, ({k: row[k] for k in _FIELDS} for row in source))
