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
