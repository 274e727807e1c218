"""The append-only journal writer: one line per finished (case, repeat), flushed unless redoing it is free."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from evalkit._failpoints import reached
from evalkit._results._frame import frame_of, rows_of
from evalkit._results._schema import CaseResult

# a line whose case a resume would redo for free waits at most this long for its flush
_FREE_FLUSH_S = 0.5


class Journal:
    """Append-only writer: one line per finished (case, repeat), flushed at once, so a crash loses nothing
    finished. A line whose every answer came from the response cache (a resume would answer it again from there,
    paying nothing) is flushed with the next line or within half a second: a warm rerun of 1,000 cases spent
    more on flushes than on reading its answers.

    It also keeps the keys it wrote and their check rows (in compact frames), so that finishing the run need
    not read back and parse its own lines: that work is done while the run waits on the network."""

    def __init__(self, path: Path, chunk: int = 500) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = path.open("ab")
        self.start = self._fh.tell()
        """The journal's size when this session began: later lines are this session's."""
        self.keys: list[tuple[str, int]] = []
        self._chunk = chunk  # rows per frame: small, so that little is left to convert when the run ends
        self._pending: list[dict[str, Any]] = []
        self._frames: list[pl.DataFrame] = []
        self._counts: list[int] = []
        self._flushed = time.monotonic()

    def append(self, result: CaseResult) -> None:
        self._fh.write(result.model_dump_json().encode("utf-8") + b"\n")
        now = time.monotonic()
        if not _free_to_redo(result) or now - self._flushed >= _FREE_FLUSH_S:
            self._fh.flush()
            self._flushed = now
        reached("case:journalled")
        self.keys.append(result.key)
        rows = list(rows_of([result]))
        self._counts.append(len(rows))
        self._pending.extend(rows)
        if len(self._pending) >= self._chunk:
            self._frames.append(frame_of(self._pending))
            self._pending = []

    def rows(self) -> pl.DataFrame:
        """The check rows of every line this session wrote, in the order written."""
        if self._pending:
            self._frames.append(frame_of(self._pending))
            self._pending = []
        if not self._frames:
            return frame_of([])
        self._frames = [pl.concat(self._frames)]
        return self._frames[0]

    def spans(self) -> Iterator[tuple[int, int]]:
        """(first row, number of rows) in `rows()` of each line written, in the order written."""
        start = 0
        for count in self._counts:
            yield start, count
            start += count

    def wrote(self, lines: list[bytes]) -> bool:
        """Whether `lines`, read back from the journal past `start`, are exactly the lines this session wrote."""
        return len(lines) == len(self.keys) == len(set(self.keys))

    def close(self) -> None:
        self._fh.close()


def _free_to_redo(result: CaseResult) -> bool:
    """Whether every answer of `result` came from the response cache, so that running it again costs nothing."""
    return result.cache_hit and all(c.judge_cache_hit for c in result.checks if c.judge_model)
