"""The run summary's line for a replay miss keeps its cause, its fix and the file it looked for, however long the
temp folder the cache sits under."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from evalkit._report._summary import _error_lines
from evalkit.errors import CacheMiss


def _rows(message: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "case_status": ["error", "error"],
            "case_id": ["c1", "c3"],
            "repeat": [0, 0],
            "check_index": [0, 0],
            "case_error": [message, message],
            "case_error_kind": ["CacheMiss", "CacheMiss"],
            "error": [None, None],
            "error_kind": [None, None],
        },
        schema_overrides={"error": pl.String, "error_kind": pl.String},
    )


@pytest.mark.parametrize("depth", [1, 12])
def test_a_cache_miss_under_a_long_temp_folder_keeps_its_cause_fix_and_file(depth: int) -> None:
    tmp = Path("/tmp") / "/".join(f"pytest-of-a-very-long-user-name-{i:02d}" for i in range(depth))
    entry = tmp / "cache" / "3f" / "3f9a0c1d2e4b5a6978812233445566778899aabbccddeeff0011223344556677.json"
    miss = CacheMiss("3f9a", entry, label="case c1 repeat 0")
    lines = _error_lines(_rows(f"CacheMiss: {miss}"))
    (line,) = [x for x in lines if "x CacheMiss" in x]
    assert line.startswith("    2 x CacheMiss: No cached response for 'case c1 repeat 0' (expected at ")
    assert f"{entry.name})." in line  # the file it looked for
    assert line.endswith(")."), line  # the fix is whole, to its last word: commit the cache directory (...).
    assert "then commit the cache directory (" in line and "…" not in line.split("(expected at")[0]
    if len(str(entry)) + 2 <= 200:
        assert str(entry) in line  # a path of ordinary length is shown whole
