"""Write a JSONL file atomically: readers see the old file or the whole new one, never a part."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalkit._fs import atomic_write_text
from evalkit._records._codec import encode_line


def write_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write `rows` as JSONL to `path` through a temporary file in the same folder.

    Parameters
    ----------
    path:
        Destination; its folder must exist.
    rows:
        JSON-serialisable mappings, one per line (encoded by `encode_line`, so any JSONL reader splits the
        lines where they end).

    Returns
    -------
    The path written.
    """
    target = Path(path)
    atomic_write_text(target, "".join(encode_line(dict(row)) + "\n" for row in rows))
    return target
