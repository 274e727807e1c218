"""Appending to a JSONL file that several writers share: one line per action, under a lock, torn tails mended.

Each append writes one whole line with ``O_APPEND`` and syncs it, holding an exclusive lock on the file's folder (a
lock on the file itself would not survive the rename of a rewrite; a sidecar lock file would sit beside the
user's files), so two writers (two notebooks labelling into one file) never interleave or lose a line, and a
rewrite of the file (compaction) never drops a line another writer appended meanwhile. A process killed mid-line
leaves a torn last line without its newline; the next writer cuts it off before appending.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from evalkit._records._codec import encode_line
from evalkit._records._write import write_jsonl


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of `path`'s writers for the block (none where the platform has no flock)."""
    try:
        import fcntl
    except ImportError:  # Windows: appends are still whole lines, unguarded against a concurrent rewrite
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def mend_tail(path: Path) -> int:
    """Cut off a torn last line (one a killed writer left without its newline); return the bytes removed.

    Call it holding `locked(path)`."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return 0
    try:
        size = os.fstat(fd).st_size
        end = size
        while end > 0:
            start = max(0, end - 65536)
            chunk = os.pread(fd, end - start, start)
            if end == size and chunk.endswith(b"\n"):
                return 0
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                end = start + cut + 1
                break
            end = start
        os.ftruncate(fd, end)
        os.fsync(fd)
        return size - end
    finally:
        os.close(fd)


def append_jsonl(path: str | Path, row: Mapping[str, Any]) -> None:
    """Append `row` as one line to `path` (made if missing), synced, under the writers' lock."""
    target = Path(path)
    data = (encode_line(dict(row)) + "\n").encode("utf-8")
    with locked(target):
        mend_tail(target)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)


def rewrite_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Replace `path` with `rows`, atomically, under the writers' lock."""
    target = Path(path)
    with locked(target):
        return write_jsonl(target, rows)
