"""The cache's errors and warnings."""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import EvalkitError


class CacheError(EvalkitError):
    """The cache cannot do what was asked (an unwritable directory, a replay miss, a corrupt replay entry)."""


class CacheMiss(CacheError):
    """A replay-mode lookup found no entry: the run would need the API, which replay never calls."""

    def __init__(self, key: str, path: Path, label: str | None = None) -> None:
        self.key = key
        self.path = path
        self.label = label
        what = f"{label!r}" if label else f"key {key}"
        super().__init__(
            f"No cached response for {what} (expected at {path}). The cache is in replay mode, which never "
            "calls the API, and this request has not been recorded; a changed prompt, model, schema or "
            "sampling parameter gives the request a new key. To fix: run once with an API key in readwrite "
            f"mode (the default) to record the response, then commit the cache directory ({path.parent.parent})."
        )


class CorruptCacheEntry(CacheError):
    """A cache file exists but cannot be used. Raised in replay mode; other modes warn and refetch."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(
            f"Corrupt cache entry {path}: {reason}. Delete the file and record it again in readwrite mode, "
            "or restore it from version control."
        )


class CorruptCacheEntryWarning(UserWarning):
    """A corrupt cache file was found and is treated as a miss; the next write replaces it."""


_EDIT_FIX = (
    "Review the change (git diff -- {path}): if it is not meant, restore the file from version control; "
    "if it is, record the response again instead of editing it (delete the file and run in readwrite mode, "
    "or run with --cache refresh), since an edited response is never replayed."
)


class EditedCacheEntry(CorruptCacheEntry):
    """A cache file whose response does not match the digest recorded with it: edited after it was written.

    Raised in replay mode; other modes warn (:class:`CorruptCacheEntryWarning`) and fetch the response again."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        CacheError.__init__(self, f"Edited cache entry {path}: {reason}. " + _EDIT_FIX.format(path=path))


class UnverifiedCacheEntryWarning(UserWarning):
    """An entry recorded before entries carried a digest is used without one (said once per cache object)."""


def unverified_note(path: Path) -> str:
    """The one-time note for entries that carry no digest."""
    return (
        f"Cache entry {path} has no digest (it was recorded before entries carried one), so an edit to its "
        "response cannot be detected; it and any others like it are used as they are. To seal them, record "
        "them again with --cache refresh and commit the result."
    )


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
