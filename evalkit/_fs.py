"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

_counter = itertools.count()
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def _open_temp(path: Path) -> tuple[int, str]:
    """A new, empty file beside `path`, named ``.<name>.<pid>-<n>.tmp``, opened for writing."""
    for _ in range(100):
        # pid and a per-process counter name it uniquely among live writers; O_EXCL settles the rest (a stale
        # file left by a dead process whose pid came round again)
        tmp = os.path.join(path.parent, f".{path.name}.{os.getpid()}-{next(_counter)}.tmp")
        try:
            return os.open(tmp, _FLAGS, 0o644), tmp  # the umask applies, as it does to any file a user writes
        except FileExistsError:
            continue
        except FileNotFoundError:  # the folder is new: make it only then, not on every write
            path.parent.mkdir(parents=True, exist_ok=True)
    raise FileExistsError(f"could not create a temporary file beside {path}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive, and not ours to judge
        return True
    return True


def sweep_temps(path: Path) -> int:
    """Remove the temp files a killed writer of `path` left beside it (their process is gone); return how many.

    A write that is killed between making its temp file and renaming it leaves ``.<name>.<pid>-<n>.tmp``; a
    later write of the same file takes them away, so kills do not pile files up."""
    prefix, removed = f".{path.name}.", 0
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid_text = name[len(prefix) : -len(".tmp")].partition("-")[0]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and not _alive(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed += 1
    return removed


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[int]:
    """A temp file's descriptor, for the block to write and close; the file then replaces `path`, or is removed
    if the block fails."""
    fd, tmp = _open_temp(path)
    try:
        yield fd
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_writer(path: Path, durable: bool = True) -> Iterator[IO[bytes]]:
    """A binary file handle whose contents replace `path` only when the block completes without error.

    `durable` fsyncs before the rename, so the new file survives a power cut; a cache entry can skip that,
    since a torn entry is detected and refetched.
    """
    with _replacing(Path(path)) as fd, os.fdopen(fd, "wb") as fh:
        yield fh
        fh.flush()
        if durable:
            os.fsync(fh.fileno())
    if durable:  # a cache entry (not durable) is written too often to look around each time
        sweep_temps(Path(path))


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    """Write `data` to `path` through a temp file in the same directory, then rename over it."""
    with _replacing(Path(path)) as fd:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    if durable:
        sweep_temps(Path(path))


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
