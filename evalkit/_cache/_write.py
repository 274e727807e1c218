"""Writing one entry file without ever following a symbolic link inside the cache."""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
from pathlib import Path

from evalkit._failpoints import reached
from evalkit._fs import atomic_write_bytes
from evalkit.errors import CacheError

_counter = itertools.count()
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# os.replace takes dir_fd wherever os.rename does (one implementation), though only rename is listed
_DIR_FD = {os.open, os.rename, os.unlink, os.stat} <= os.supports_dir_fd and bool(_NOFOLLOW)


def symlink_error(link: Path, path: Path) -> CacheError:
    """The error for an entry that would be written through a symbolic link."""
    try:
        target = f" (to {link.readlink()})"
    except OSError:
        target = ""
    return CacheError(
        f"Cannot write cache entry {path}: {link} is a symbolic link{target}. The cache never writes through "
        "one, since the entry would land outside the cache directory. Remove the link (or replace it with a "
        "real folder) and run again."
    )


def _is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _shard(path: Path) -> Path:
    """The entry's folder, made if missing; a symbolic link there is refused."""
    shard = path.parent
    if _is_link(shard):
        raise symlink_error(shard, path)
    shard.mkdir(parents=True, exist_ok=True)
    return shard


def write_entry(path: Path, payload: bytes) -> None:
    """Replace the entry file ``path`` atomically with ``payload``.

    Neither its folder (the shard) nor the file may be a symbolic link: :class:`CacheError` naming the link.
    Where the platform can, the folder is opened with ``O_NOFOLLOW`` and the file made inside that open folder,
    so a link swapped in between the check and the write is refused too. Other failures raise ``OSError``.
    """
    shard = _shard(path)
    if not _DIR_FD:
        if _is_link(path):
            raise symlink_error(path, path)
        reached("cache:written")
        atomic_write_bytes(path, payload, durable=False)  # no fsync: a torn entry is detected and refetched
        return
    try:
        dir_fd = os.open(shard, _DIR_FLAGS)
    except OSError as exc:
        if _is_link(shard):  # swapped in after the check
            raise symlink_error(shard, path) from exc
        raise
    try:
        _write_in(dir_fd, path, payload)
    finally:
        os.close(dir_fd)


def _write_in(dir_fd: int, path: Path, payload: bytes) -> None:
    name = path.name
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise symlink_error(path, path)
    for _ in range(100):
        tmp = f".{name}.{os.getpid()}-{next(_counter)}.tmp"
        try:
            fd = os.open(tmp, _FILE_FLAGS, 0o644, dir_fd=dir_fd)  # the umask applies, as to any file
            break
        except FileExistsError:
            continue
    else:
        raise CacheError(f"could not create a temporary file beside {path}")
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        reached("cache:written")
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
