"""The response cache: looking entries up and writing them, by mode."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import threading
import uuid
import warnings
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from evalkit._cache._entries import (
    CacheEntry,
    _Corrupt,
    _Edited,
    _now_iso,
    _read_entry,
    _serialise,
    response_digest,
)
from evalkit._cache._keys import (
    CACHE_FORMAT_VERSION,
    _check_identity,
    _check_key,
    _key_of,
    _strip_meta,
    sanitize_request,
)
from evalkit._cache._layout import CACHE_DIR_ENV, _os_error, default_cache_dir
from evalkit._cache._origin import DEFAULT_BASE_URL, api_origin
from evalkit._cache._remote import RemoteEntries
from evalkit._cache._stats import CacheStats, _Counters
from evalkit._cache._write import write_entry
from evalkit._fs import atomic_write_bytes
from evalkit._store import is_url, parse_url
from evalkit.errors import (
    CacheError,
    CacheMiss,
    CorruptCacheEntry,
    CorruptCacheEntryWarning,
    EditedCacheEntry,
    UnverifiedCacheEntryWarning,
)

_FIX_WRITABLE = (
    f"Point {CACHE_DIR_ENV} at a writable directory, pass a different cache directory, "
    "or disable the cache with --cache off."
)


class CacheMode(StrEnum):
    """How a :class:`ResponseCache` uses the disk."""

    READWRITE = "readwrite"
    """Read hits, write misses (the default)."""
    REPLAY = "replay"
    """Read only; a miss is an error (:class:`CacheMiss`). For CI without an API key."""
    REFRESH = "refresh"
    """Ignore existing entries and write fresh ones."""
    OFF = "off"
    """Neither read nor write."""


CacheModeName = Literal["readwrite", "replay", "refresh", "off"]


class ResponseCache:
    """The response cache. Safe to share between threads and async tasks.

    Typical use::

        cache = ResponseCache()                      # .evalkit/cache, or $EVALKIT_CACHE_DIR
        key = cache_key(MESSAGES_ENDPOINT, request)  # MESSAGES_ENDPOINT is "/v1/messages"
        entry = cache.get(key, label="tri-001")      # None on a miss; raises CacheMiss in replay mode
        if entry is None:
            response = call_the_api(request)         # the message's JSON: {"type": "message", "content": [...]}
            cache.put(key, MESSAGES_ENDPOINT, request, 0, response, {"input_tokens": 812, "cost_usd": 0.0031})
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        mode: CacheMode | CacheModeName = CacheMode.READWRITE,
    ) -> None:
        try:
            self._mode = CacheMode(mode)
        except ValueError:
            valid = ", ".join(m.value for m in CacheMode)
            raise ValueError(f"unknown cache mode {mode!r}; expected one of: {valid}") from None
        self._remote: RemoteEntries | None = None
        if directory is not None and is_url(directory):
            where = parse_url(directory)
            self._remote = RemoteEntries(where)  # read through the local folder that mirrors it
            self._directory = where.local
        else:
            self._directory = (
                Path(directory).expanduser().absolute() if directory is not None else default_cache_dir()
            )
        self._counters = _Counters()
        self._note_lock = threading.Lock()
        self._noted_unverified = False
        self.paid_batches: set[str] = set()
        """Message Batches whose responses the current run paid for: reading them back is not a saving."""

    @functools.cached_property
    def _recorded_origins(self) -> set[str]:
        """The servers a sample of the cache's entries were recorded against (the default API as its URL)."""
        found: set[str] = set()
        for number, path in enumerate(self._directory.glob("*/*.json")):
            if number >= 50:
                break
            try:
                recorded = json.loads(path.read_bytes()).get("base_url")
            except (OSError, ValueError, AttributeError):
                continue
            found.add(recorded if isinstance(recorded, str) else DEFAULT_BASE_URL)
        return found

    def _recorded_elsewhere(self) -> str | None:
        """Why a replay misses when every sampled entry came from another server than the one asked now."""
        now = api_origin(None) or DEFAULT_BASE_URL
        recorded = self._recorded_origins
        if not recorded or now in recorded:
            return None
        return f"The cache was recorded against {', '.join(sorted(recorded))}; this run asks {now}."

    def paid_for(self, entry: CacheEntry) -> bool:
        """Whether ``entry`` came from one of ``paid_batches``: the run's cost, though read from the cache."""
        batch_id = entry.meta.get("batch_id")
        return isinstance(batch_id, str) and batch_id in self.paid_batches

    @property
    def directory(self) -> Path:
        return self._directory

    @property
    def location(self) -> str:
        """Where the cache is kept: its store URL (``s3://...``), or its folder."""
        return self._remote.where.url if self._remote is not None else str(self._directory)

    @property
    def remote(self) -> RemoteEntries | None:
        """The store behind the local layer, for a cache at an ``s3://`` URL."""
        return self._remote

    @property
    def mode(self) -> CacheMode:
        return self._mode

    @property
    def stats(self) -> CacheStats:
        """A consistent snapshot of this object's counters, in this process (see :class:`CacheStats`)."""
        return self._counters.snapshot()

    def __repr__(self) -> str:
        return f"ResponseCache({self.location!r}, mode={self._mode.value!r})"

    def path_for(self, key: str) -> Path:
        """Where the entry for ``key`` lives: ``<directory>/<key[:2]>/<key>.json``."""
        _check_key(key)
        return self._directory / key[:2] / f"{key}.json"

    # ------------------------------------------------------------------------------------------- reading

    def get(self, key: str, *, label: str | None = None) -> CacheEntry | None:
        """The cached entry for ``key``, or None when the caller should call the API.

        ``label`` (a case id, a judge call's name) is only used in error messages. In replay mode a miss raises
        :class:`CacheMiss` and a corrupt file raises :class:`CorruptCacheEntry`; in other modes a corrupt file
        warns (:class:`CorruptCacheEntryWarning`) and counts as a miss. For :data:`MESSAGES_ENDPOINT`, an entry
        whose response is not a message (``{"type": "message", "content": [...]}``) is corrupt. An entry from
        one of ``paid_batches`` is returned but counted as a miss (this run paid for it).

        An entry whose response does not match its digest was edited after it was recorded: in replay mode it
        raises :class:`EditedCacheEntry` (a :class:`CorruptCacheEntry`), naming the file and what to do; in
        other modes it warns and counts as a corrupt miss. An entry without a digest (recorded before entries
        carried one) is used, with one :class:`UnverifiedCacheEntryWarning` per cache object.
        """
        path = self.path_for(key)
        if self._mode is CacheMode.OFF:
            return None
        if self._mode is CacheMode.REFRESH:
            self._counters.miss()
            return None
        fetched: tuple[bytes, str | None] | None = None
        try:
            try:
                entry = _read_entry(path, key)
            except FileNotFoundError:
                if self._remote is None:
                    raise
                fetched = self._remote.fetch(key)
                if fetched is None:
                    raise
                write_entry(path, fetched[0])  # checked below as any entry is: the digest goes with it
                entry = _read_entry(path, key)
        except FileNotFoundError:
            self._counters.miss()
            if self._mode is CacheMode.REPLAY:
                raise CacheMiss(key, path, label, self._recorded_elsewhere()) from None
            return None
        except _Corrupt as exc:
            self._counters.miss(corrupt=True)
            if fetched is not None and self._remote is not None:
                self._remote.mark_bad(key, fetched[1])
            edited = isinstance(exc, _Edited)
            if self._mode is CacheMode.REPLAY:
                raise (EditedCacheEntry if edited else CorruptCacheEntry)(path, exc.reason) from None
            where = f" (for {label!r})" if label else ""
            fix = f" {EditedCacheEntry.fix(path)}" if edited else ""
            warnings.warn(
                f"{'Edited' if edited else 'Corrupt'} cache entry {path}{where}: {exc.reason}. Treating it as "
                f"a miss; the response will be fetched again and the file replaced.{fix}",
                CorruptCacheEntryWarning,
                stacklevel=2,
            )
            return None
        if entry.digest is None:
            self._note_unverified(path)
        if self.paid_for(entry):
            self._counters.miss()  # this run's own batch result: paid for, not saved
        else:
            self._counters.hit((entry.input_tokens or 0) + (entry.output_tokens or 0), entry.cost_usd)
        return entry

    def prefetch(self, keys: Iterable[str], threads: int = 32) -> int:
        """Bring the entries for `keys` that the store holds and the local layer lacks into the local layer, many
        at a time; returns how many came. A cache in a folder has nothing to fetch (0). Each is checked when read,
        as any entry is."""
        if self._remote is None or self._mode in (CacheMode.OFF, CacheMode.REFRESH):
            return 0
        remote = self._remote
        wanted = [k for k in dict.fromkeys(keys) if remote.may_hold(k) and not self.path_for(k).is_file()]
        if not wanted:
            return 0

        def fetch(key: str) -> bool:
            got = remote.fetch(key)
            if got is None:
                return False
            try:
                write_entry(self.path_for(key), got[0])
            except OSError as exc:
                raise self._not_writable(exc) from exc
            return True

        with ThreadPoolExecutor(min(threads, len(wanted)), thread_name_prefix="evalkit-prefetch") as pool:
            return sum(pool.map(fetch, wanted))

    def _note_unverified(self, path: Path) -> None:
        with self._note_lock:
            if self._noted_unverified:
                return
            self._noted_unverified = True
        warnings.warn(_unverified_note(path), UnverifiedCacheEntryWarning, stacklevel=3)

    # ------------------------------------------------------------------------------------------- writing

    def put(
        self,
        key: str,
        endpoint: str,
        request: Mapping[str, Any],
        repeat: int,
        response: Any,
        meta: Mapping[str, Any] | None = None,
        *,
        verify: bool = True,
        base_url: str | None = None,
    ) -> None:
        """Store ``response`` for the request whose key is ``key`` (a no-op in replay and off modes).

        ``key`` must be ``cache_key(endpoint, request, repeat)``. ``meta`` may carry ``model``,
        ``input_tokens``, ``output_tokens``, ``cost_usd`` and any other JSON; ``created_at`` (UTC) and ``model``
        (from the request) are filled in when absent. The write is atomic and replaces any existing entry.
        ``verify=False`` skips recomputing the key, for a caller that has just computed it from the same request.
        ``base_url`` is the one given to :func:`cache_key` (None: ``ANTHROPIC_BASE_URL``); the file records it
        when it is not the default endpoint, and a digest of the response, checked on every read. Neither the
        entry's folder nor the file may be a symbolic link (:class:`CacheError` naming it).
        Raises :class:`CacheError` if the directory cannot be written, ``TypeError``/``ValueError`` if the
        arguments are not JSON (nothing is written then).
        """
        _check_key(key)
        if self._mode in (CacheMode.OFF, CacheMode.REPLAY):
            return
        _check_identity(endpoint, repeat)
        if response is None:
            raise ValueError("cannot cache a missing (None) response")
        sanitized = sanitize_request(request)
        origin = api_origin(base_url)
        # verify=False is for callers that computed the key with cache_key() from this very request
        expected = _key_of(endpoint, sanitized, repeat, origin) if verify else key
        if key != expected:
            raise ValueError(
                f"cache key {key} does not match the request (it hashes to {expected}); "
                "compute keys with cache_key(endpoint, request, repeat)"
            )
        full_meta: dict[str, Any] = {"created_at": _now_iso(), "model": sanitized.get("model")}
        if meta is not None:
            full_meta.update(_strip_meta(meta, top_level=True))
        document = {
            "format": CACHE_FORMAT_VERSION,
            "key": key,
            "endpoint": endpoint,
            "repeat": repeat,
            "request": sanitized,
            "response": response,
            "meta": full_meta,
        }
        if origin is not None:
            document["base_url"] = origin
        try:
            document["digest"] = response_digest(key, response)
            payload = _serialise(document)
        except (TypeError, ValueError) as exc:
            exc.add_note(f"while writing cache entry {key}: the response and meta must be JSON")
            raise
        path = self.path_for(key)
        try:
            # no fsync: a cache entry torn by a power cut is detected as corrupt and refetched
            write_entry(path, payload)
        except OSError as exc:
            raise self._not_writable(exc) from exc
        if self._remote is not None:
            self._remote.store(key, payload, replace=self._mode is CacheMode.REFRESH)
        self._counters.write()

    def check_writable(self) -> None:
        """Fail early, before a run starts, if entries could not be written.

        Creates the directory if needed and writes and removes a probe file. Raises :class:`CacheError` naming
        the directory and the fix. A no-op in replay and off modes, which never write.
        """
        if self._mode in (CacheMode.OFF, CacheMode.REPLAY):
            return
        if self._remote is not None:
            self._remote.check_writable()
        probe = self._directory / f"write-probe-{uuid.uuid4().hex[:12]}"
        try:
            atomic_write_bytes(probe, b"probe\n", durable=False)  # removed at once: nothing to sync
            probe.unlink()
        except OSError as exc:
            with contextlib.suppress(OSError):
                probe.unlink()
            raise self._not_writable(exc) from exc

    def check_readable(self) -> None:
        """Fail early, before a replay run starts, if there is no cache to replay.

        In replay mode, raises :class:`CacheError` naming the directory and the fix when it does not exist, is
        not a directory, or cannot be listed (every lookup would otherwise miss, case by case). A no-op in the
        other modes, which fetch what is not cached. Reads nothing else: a cache without the entries a run needs
        still fails lookup by lookup (:class:`CacheMiss`).
        """
        if self._mode is not CacheMode.REPLAY:
            return
        if self._remote is not None:
            self._remote.check_readable()  # the local layer may be empty: the store is the cache
            return
        directory = self._directory
        fix = (
            "A replay run reads recorded responses only: pass --cache-dir or set "
            f"{CACHE_DIR_ENV} to the committed cache."
        )
        try:
            if not directory.exists():
                raise CacheError(f"no cache at {directory}: the directory does not exist. {fix}")
            if not directory.is_dir():
                raise CacheError(f"no cache at {directory}: it is a file, not a directory. {fix}")
            with os.scandir(directory):
                pass
        except OSError as exc:
            raise CacheError(f"no cache at {directory}: cannot read it ({_os_error(exc)}). {fix}") from exc

    def _not_writable(self, exc: OSError) -> CacheError:
        detail = exc.strerror or str(exc)
        where = f" ({exc.filename})" if exc.filename else ""
        return CacheError(
            f"Cannot write to the response cache directory {self._directory}: {detail}{where}. {_FIX_WRITABLE}"
        )


def _unverified_note(path: Path) -> str:
    """The one-time note for entries that carry no digest."""
    return (
        f"Cache entry {path} has no digest (it was recorded before entries carried one), so an edit to its "
        "response cannot be detected; it and any others like it are used as they are. To seal them, record "
        "them again with --cache refresh and commit the result."
    )
