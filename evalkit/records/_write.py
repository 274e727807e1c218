"""Write a JSONL file atomically: readers see the old file or the whole new one, never a part."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def write_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write `rows` as JSONL to `path` through a temporary file in the same folder.

    Parameters
    ----------
    path:
        Destination; its folder must exist.
    rows:
        JSON-serialisable mappings, one per line.

    Returns
    -------
    The path written.
    """
    target = Path(path)
    # same folder, so os.replace is a rename on one file system and so atomic
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(dict(row), ensure_ascii=False) + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
