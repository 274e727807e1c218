"""Cache maintenance: summarising a cache directory and pruning entries."""

from __future__ import annotations

import contextlib
import math
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from evalkit._cache._entries import CacheEntry, _Corrupt, _read_entry, _Unreadable
from evalkit._cache._keys import _KEY_RE
from evalkit._cache._layout import _STALE_TEMP_SECONDS, _TEMP_SUFFIX, _os_error, default_cache_dir
from evalkit.errors import CacheError

MAX_PRUNE_DAYS = 36_500
"""The largest ``older_than_days`` :func:`prune` takes (100 years): anything larger would reach before year 1."""


@dataclass(frozen=True)
class CacheSummary:
    """What :func:`scan` found in a cache directory."""

    directory: Path
    entries: int = 0
    """Valid entries (corrupt files are listed in ``corrupt`` instead)."""
    bytes: int = 0
    """Size of all entry files, corrupt and unreadable ones included."""
    by_model: dict[str, int] = field(default_factory=dict)
    """Valid entries per model (``"unknown"`` when none is recorded)."""
    oldest: datetime | None = None
    newest: datetime | None = None
    corrupt: dict[Path, str] = field(default_factory=dict)
    """Corrupt entry files and why each is unusable."""
    temp_files: int = 0
    """Leftover temp files (from writes in progress, or interrupted)."""
    unreadable: dict[Path, str] = field(default_factory=dict)
    """Folders and entry files that could not be read (e.g. permission denied), with the error; entries in an
    unreadable folder are not counted anywhere else."""
    unverified: int = 0
    """Valid entries without a digest (recorded before entries carried one): their responses cannot be checked."""


@dataclass(frozen=True)
class PruneReport:
    """What :func:`prune` removed (or, with ``dry_run``, would remove)."""

    directory: Path
    removed: tuple[Path, ...] = ()
    """Entry files removed (with ``dry_run``: that would be)."""
    kept: int = 0
    """Entries that do not match the criteria (entries that matched but could not be removed are in ``failed``)."""
    bytes_freed: int = 0
    temp_files_removed: int = 0
    dry_run: bool = False
    temp_files: tuple[Path, ...] = ()
    """Stale temp files removed (with ``dry_run``: that would be); ``temp_files_removed`` is their number."""
    failed: dict[Path, str] = field(default_factory=dict)
    """Files that matched but could not be removed, with the error."""
    unreadable: dict[Path, str] = field(default_factory=dict)
    """Folders and files that could not be read, so whatever they hold was not considered."""

    @property
    def complete(self) -> bool:
        """Whether everything that matched was removed (and everything could be read)."""
        return not self.failed and not self.unreadable


@dataclass(frozen=True)
class _File:
    path: Path
    key: str
    size: int
    mtime: datetime
    entry: CacheEntry | None
    problem: str | None
    unreadable: bool = False

    @property
    def created(self) -> datetime:
        created = self.entry.created_at if self.entry is not None else None
        return created or self.mtime


@dataclass
class _Walk:
    files: list[_File] = field(default_factory=list)
    """Entry files, validated."""
    temps: list[Path] = field(default_factory=list)
    unreadable: dict[Path, str] = field(default_factory=dict)
    """Folders that could not be listed and files that could not be examined, with the error."""


def _resolve_dir(directory: str | os.PathLike[str] | None) -> Path:
    return Path(directory).expanduser().absolute() if directory is not None else default_cache_dir()


def _scanned_dir(directory: str | os.PathLike[str] | None) -> Path:
    root = _resolve_dir(directory)
    try:
        is_file = root.exists() and not root.is_dir()
    except OSError as exc:
        raise CacheError(f"cannot read the cache directory {root}: {_os_error(exc)}") from exc
    if is_file:
        raise CacheError(f"{root} is a file, not a cache directory; give the folder that holds the entries")
    return root


def _listing(folder: Path, walk: _Walk) -> list[os.DirEntry[str]]:
    """The folder's entries by name; an unlistable folder is recorded in ``walk.unreadable`` and is empty."""
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except FileNotFoundError:  # removed concurrently
        return []
    except OSError as exc:
        walk.unreadable[folder] = _os_error(exc)
        return []


def _kind(item: os.DirEntry[str], walk: _Walk) -> Literal["file", "dir"] | None:
    try:
        if item.is_dir(follow_symlinks=False):
            return "dir"
        return "file" if item.is_file(follow_symlinks=False) else None
    except OSError as exc:
        walk.unreadable[Path(item.path)] = _os_error(exc)
        return None


def _is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(_TEMP_SUFFIX)


def _walk(root: Path) -> _Walk:
    """Entry files (validated) and temp files under ``root``; other files are ignored. Never raises OSError:
    what cannot be read is recorded in ``unreadable``."""
    walk = _Walk()
    if not root.exists():
        return walk
    for top in _listing(root, walk):
        kind = _kind(top, walk)
        if kind == "file" and _is_temp(top.name):
            walk.temps.append(Path(top.path))
        if kind != "dir" or not re.fullmatch(r"[0-9a-f]{2}", top.name):
            continue
        shard = Path(top.path)
        for item in _listing(shard, walk):
            path = Path(item.path)
            if _kind(item, walk) != "file":
                continue
            if _is_temp(item.name):
                walk.temps.append(path)
                continue
            if path.suffix != ".json" or not _KEY_RE.fullmatch(path.stem):
                continue
            try:
                stat = item.stat(follow_symlinks=False)
            except FileNotFoundError:  # removed concurrently
                continue
            except OSError as exc:
                walk.unreadable[path] = _os_error(exc)
                continue
            entry: CacheEntry | None = None
            problem: str | None = None
            unreadable = False
            if path.stem[:2] != shard.name:
                problem = f"misplaced: belongs in {path.stem[:2]}/"
            else:
                try:
                    entry = _read_entry(path, path.stem)
                except FileNotFoundError:
                    continue
                except _Corrupt as exc:
                    problem, unreadable = exc.reason, isinstance(exc, _Unreadable)
            mtime = datetime.fromtimestamp(stat.st_mtime, UTC)
            walk.files.append(_File(path, path.stem, stat.st_size, mtime, entry, problem, unreadable))
    return walk


def scan(directory: str | os.PathLike[str] | None = None) -> CacheSummary:
    """Summarise a cache directory (default: :func:`default_cache_dir`); a missing directory is empty.

    Folders and files that cannot be read are listed in ``unreadable`` rather than raising.
    """
    root = _scanned_dir(directory)
    walk = _walk(root)
    by_model: dict[str, int] = {}
    corrupt: dict[Path, str] = {}
    unreadable = dict(walk.unreadable)
    times: list[datetime] = []
    unverified = 0
    for f in walk.files:
        if f.entry is None:
            (unreadable if f.unreadable else corrupt)[f.path] = f.problem or "unusable"
            continue
        unverified += f.entry.digest is None
        model = f.entry.model or "unknown"
        by_model[model] = by_model.get(model, 0) + 1
        times.append(f.created)
    return CacheSummary(
        directory=root,
        entries=len(times),
        bytes=sum(f.size for f in walk.files),
        by_model=dict(sorted(by_model.items())),
        oldest=min(times, default=None),
        newest=max(times, default=None),
        corrupt=corrupt,
        temp_files=len(walk.temps),
        unreadable=dict(sorted(unreadable.items())),
        unverified=unverified,
    )


def check_older_than_days(days: float) -> float:
    """``days`` as a float if it is a usable age for :func:`prune` (finite, from 0 to :data:`MAX_PRUNE_DAYS`);
    else ``ValueError`` saying what is expected."""
    if isinstance(days, bool) or not isinstance(days, int | float):
        raise TypeError(f"older_than_days must be a number of days, not {days!r}")
    if not math.isfinite(days) or not 0 <= days <= MAX_PRUNE_DAYS:
        raise ValueError(
            f"older_than_days must be a finite number of days from 0 to {MAX_PRUNE_DAYS} (100 years), not {days!r}"
        )
    return float(days)


def _unlink(path: Path, failed: dict[Path, str]) -> bool:
    """Remove ``path``; False (with the error recorded in ``failed``) if it could not be."""
    try:
        os.unlink(path)
    except FileNotFoundError:  # removed concurrently: gone, as asked
        return True
    except OSError as exc:
        failed[path] = _os_error(exc)
        return False
    return True


def prune(
    directory: str | os.PathLike[str] | None = None,
    *,
    older_than_days: float | None = None,
    keep_keys: Iterable[str] | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
) -> PruneReport:
    """Remove cache entries matching every given criterion.

    - ``older_than_days``: entries created (``meta.created_at``, else the file's mtime) more than this many days
      before ``now`` (default: the current time); from 0 to :data:`MAX_PRUNE_DAYS`.
    - ``keep_keys``: entries whose key is not in this set (e.g. the keys the current suites still use).

    Given both, an entry goes only if it is old *and* not kept. Given neither, raises ``ValueError`` rather than
    empty the cache. Corrupt files are judged by their file name and mtime like any other. Temp files left by
    interrupted writes (over an hour old) are removed too, and emptied shard directories. With ``dry_run``
    nothing is deleted and the report lists what would be.

    A file that cannot be removed, or a folder that cannot be read, does not stop the prune: it goes on with the
    rest and lists them in the report's ``failed`` and ``unreadable`` (``report.complete`` is then False).
    """
    if older_than_days is None and keep_keys is None:
        raise ValueError("prune needs older_than_days, keep_keys, or both (refusing to remove every entry)")
    if older_than_days is not None:
        older_than_days = check_older_than_days(older_than_days)
    root = _scanned_dir(directory)
    current = now or datetime.now(UTC)
    if current.tzinfo is None:
        current = current.replace(tzinfo=UTC)
    try:
        cutoff = current - timedelta(days=older_than_days) if older_than_days is not None else None
    except OverflowError:  # `now` within 100 years of year 1: nothing can be older than that
        cutoff = datetime.min.replace(tzinfo=UTC)
    keep = set(keep_keys) if keep_keys is not None else None

    walk = _walk(root)
    doomed = [
        f
        for f in walk.files
        if (cutoff is None or f.created < cutoff) and (keep is None or f.key not in keep)
    ]
    stale_before = time.time() - _STALE_TEMP_SECONDS
    stale_temps = []
    for temp in walk.temps:
        with contextlib.suppress(OSError):
            if temp.stat().st_mtime < stale_before:
                stale_temps.append(temp)
    failed: dict[Path, str] = {}
    if dry_run:
        removed, removed_temps = doomed, stale_temps
    else:
        removed = [f for f in doomed if _unlink(f.path, failed)]
        removed_temps = [temp for temp in stale_temps if _unlink(temp, failed)]
        for shard in {f.path.parent for f in removed} | {t.parent for t in removed_temps if t.parent != root}:
            with contextlib.suppress(OSError):
                shard.rmdir()  # only succeeds when empty
    return PruneReport(
        directory=root,
        removed=tuple(f.path for f in removed),
        kept=len(walk.files) - len(doomed),
        bytes_freed=sum(f.size for f in removed),
        temp_files_removed=len(removed_temps),
        dry_run=dry_run,
        temp_files=tuple(removed_temps),
        failed=failed,
        unreadable=dict(sorted(walk.unreadable.items())),
    )
