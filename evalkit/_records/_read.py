"""Read a JSONL file line by line, each bad line becoming a located problem."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalkit._records._codec import decode_line, split_lines
from evalkit.errors import Problem

_ONE_PER_LINE = "write one JSON object per line"


def read_jsonl(path: str | Path, problems: list[Problem]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of a JSONL file.

    Parameters
    ----------
    path:
        The file to read.
    problems:
        Collects a located problem for each line that is not a JSON object, and for a file that
        cannot be read; the caller raises once it has seen every line.

    Returns
    -------
    An iterator of 1-based line numbers and the parsed objects.
    """
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.append(Problem(where, None, "file", "no such file", "check the path"))
        return
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(where, None, "file", f"cannot be read: {exc}", "save it as UTF-8 text"))
        return
    for number, raw in enumerate(split_lines(text), start=1):
        if not raw.strip():
            continue
        obj, bad = decode_line(raw)
        if bad is not None:
            field, message, hint = bad
            if message.startswith("invalid JSON: "):  # as records files have always said it
                message, hint = f"not valid JSON ({message.removeprefix('invalid JSON: ')})", _ONE_PER_LINE
            field = "json" if field == "(json)" else field  # a records file has no case fields to name
            problems.append(Problem(where, number, field, message, hint))
            continue
        if not isinstance(obj, dict):
            problems.append(
                Problem(
                    where,
                    number,
                    "json",
                    f"a {type(obj).__name__}, not an object",
                    _ONE_PER_LINE,
                )
            )
            continue
        yield number, obj
