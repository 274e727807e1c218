"""A content-addressed on-disk cache of Claude API responses.

Every request the toolkit sends (a model call, a judge call) can be answered from the cache, so a rerun costs
nothing and returns exactly what the first run saw. Entries are plain, pretty-printed JSON files, so a team can
commit the cache to git and replay judged evals in CI without an API key (``mode="replay"``).

Layout::

    <directory>/<key[:2]>/<key>.json

where ``key`` is the sha256 of the canonical JSON of
``{"format": CACHE_FORMAT_VERSION, "endpoint": ..., "request": ..., "repeat": ...}``
(see :func:`cache_key`). API keys and headers never reach the key or the file: secret-named fields are removed
from the request first (see :func:`sanitize_request`).

Each file holds ``{"format", "key", "endpoint", "repeat", "request", "response", "meta"}``; ``meta`` records
``created_at``, ``model``, ``input_tokens``, ``output_tokens``, ``cost_usd`` and anything else the caller adds.

The directory is, in order of precedence: the ``directory`` argument, the ``EVALKIT_CACHE_DIR`` environment
variable, ``.evalkit/cache`` under the current directory.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import threading
import time
import uuid
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from evalkit._fs import atomic_write_bytes
from evalkit._hashing import canonical_json, sha256_hex
from evalkit.errors import EvalkitError

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_FORMAT_VERSION",
    "DEFAULT_CACHE_DIR",
    "MAX_PRUNE_DAYS",
    "MESSAGES_ENDPOINT",
    "CacheEntry",
    "CacheError",
    "CacheMiss",
    "CacheMode",
    "CacheModeName",
    "CacheStats",
    "CacheSummary",
    "CorruptCacheEntry",
    "CorruptCacheEntryWarning",
    "PruneReport",
    "ResponseCache",
    "cache_key",
    "check_older_than_days",
    "default_cache_dir",
    "prune",
    "sanitize_request",
    "scan",
]

MESSAGES_ENDPOINT = "/v1/messages"
"""The endpoint every cached model call goes to; part of each cache key."""

CACHE_FORMAT_VERSION = 1
"""Bumped whenever the key derivation or the file layout changes; entries of another version are ignored."""

CACHE_DIR_ENV = "EVALKIT_CACHE_DIR"
DEFAULT_CACHE_DIR = Path(".evalkit") / "cache"

_KEY_RE = re.compile(r"[0-9a-f]{64}")
_TEMP_SUFFIX = ".tmp"
_STALE_TEMP_SECONDS = 3600.0
"""Temp files older than this are leftovers of a crashed write (a live write takes milliseconds)."""

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


# --------------------------------------------------------------------------------------------------- errors


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


# --------------------------------------------------------------------------------------------------- keys

_SECRET_NAMES = frozenset(
    {
        "api_key",
        "apikey",
        "x_api_key",
        "anthropic_api_key",
        "authorization",
        "proxy_authorization",
        "auth_token",
        "x_auth_token",
        "anthropic_auth_token",
        "authorization_token",
        "access_token",
        "bearer_token",
        "api_token",
        "session_token",
        "refresh_token",
        "token",
        "secret",
        "secret_key",
        "client_secret",
        "private_key",
        "password",
        "passwd",
        "cookie",
    }
)
"""Field names (lower-cased, ``-`` read as ``_``) of credentials, removed from the top level of a request and
from the known places a credential can sit in (see :func:`sanitize_request`), never from anything else."""

_HEADER_NAMES = frozenset({"extra_headers", "headers", "default_headers"})
"""Top-level request fields that carry HTTP headers, removed whole."""

_SAMPLING_FLOATS = frozenset({"temperature", "top_p"})
"""Sampling parameters that are floats in the API: an int (``temperature=0``) is hashed as the equal float
(``0.0``), the form a suite's TOML gives, so both find the same entry."""


def _normalise_name(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | bytes | int | float | bool)


def _is_secret(name: Any, *, headers: bool = False) -> bool:
    if not isinstance(name, str):
        return False
    norm = _normalise_name(name)
    return norm in _SECRET_NAMES or (headers and norm in _HEADER_NAMES)


def _copy(value: Any) -> Any:
    """A deep copy as plain JSON containers (a Mapping becomes a dict, a tuple a list); nothing is removed."""
    if isinstance(value, Mapping):
        return {name: _copy(item) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(item) for item in value]
    return value


def _without_secrets(value: Any, *, headers: bool = False) -> Any:
    """A copy of a known credential-bearing object without its secret-named fields (one level deep)."""
    if not isinstance(value, Mapping):
        return _copy(value)
    return {name: _copy(item) for name, item in value.items() if not _is_secret(name, headers=headers)}


def _as_float(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # not a sampling parameter the API would take; hashed as given
            return value
    return value


def _strip_request(request: Mapping[str, Any], *, floats: bool = True) -> dict[str, Any]:
    """The request without credentials, with ``temperature``/``top_p`` as floats (unless ``floats`` is False)."""
    out: dict[str, Any] = {}
    for name, item in request.items():
        if _is_secret(name, headers=True):
            continue
        if name == "extra_body" and isinstance(item, Mapping):
            # merged into the top level of the body the SDK sends, so read as a top level of its own
            out[name] = _strip_request(item, floats=floats)
        elif name == "mcp_servers" and isinstance(item, list | tuple):
            # each server's authorization_token (and any headers) is a credential for that server
            out[name] = [_without_secrets(server, headers=True) for server in item]
        elif name in ("metadata", "extra_query") and isinstance(item, Mapping):
            # metadata does not shape the response; query parameters are where some proxies take a key
            out[name] = _without_secrets(item)
        elif floats and name in _SAMPLING_FLOATS:
            out[name] = _as_float(item)
        elif name in _CONTENT_FIELDS:
            out[name] = _copy(
                item
            )  # what the model reads: a tool input {"cookie": ...} is part of the question
        else:
            out[name] = _without_nested_secrets(item)
    return out


_CONTENT_FIELDS = frozenset({"messages", "system"})
"""Request fields that are content, copied whole: nothing in them is a credential of the call."""

_SCHEMA_KEYS = frozenset({"input_schema", "schema", "properties", "$defs", "definitions"})
"""Keys holding a JSON Schema, copied whole: a property called ``api_key`` describes data, it is not a key."""


def _without_nested_secrets(value: Any) -> Any:
    """A copy without secret-named string values at any depth (a tool's or extra field's ``api_key``), except
    inside JSON Schemas."""
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for name, item in value.items():
            if _is_secret(name) and isinstance(item, str | bytes):
                continue
            out[name] = _copy(item) if name in _SCHEMA_KEYS else _without_nested_secrets(item)
        return out
    if isinstance(value, list | tuple):
        return [_without_nested_secrets(item) for item in value]
    return value


def _strip_meta(value: Any, *, top_level: bool) -> Any:
    """Meta never reaches the key, so any secret-named scalar in it is dropped, at any depth."""
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for name, item in value.items():
            if _is_secret(name, headers=top_level) and (top_level or _is_scalar(item)):
                continue
            out[name] = _strip_meta(item, top_level=False)
        return out
    if isinstance(value, list | tuple):
        return [_strip_meta(item, top_level=False) for item in value]
    return value


def sanitize_request(request: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``request`` with credentials removed, as it is hashed and stored.

    Credentials can enter a request only through the SDK call's own credential and header fields, so only
    these are removed:

    - a top-level field named like a credential (``api_key``, ``x-api-key``, ``Authorization``, ``auth_token``,
      ``anthropic_auth_token``, ``api_token``, ``token``, ``password``, ...) or carrying headers
      (``extra_headers``, ``headers``, ``default_headers``), whatever its value;
    - the same fields at the top level of ``extra_body`` (which the SDK merges into the request body);
    - in each ``mcp_servers`` item, its ``authorization_token`` (and any other credential or header field);
    - in ``metadata`` and ``extra_query``, credential-named fields;
    - anywhere else outside messages and system text, a credential-named field holding a string (a tool
      definition's ``api_key``), except inside a JSON Schema.

    Nothing inside messages, system text or a JSON Schema is touched: a tool input ``{"cookie": "oatmeal"}`` or a
    schema property called ``api_key`` is part of what the model was asked. ``temperature`` and ``top_p`` given as ints are read as the equal floats (``0`` as ``0.0``). The input
    is not modified.
    """
    if not isinstance(request, Mapping):
        raise TypeError(f"a cache request must be a mapping, not {type(request).__name__}")
    return _strip_request(request)


def _key_of(endpoint: str, sanitized: Mapping[str, Any], repeat: int) -> str:
    return sha256_hex(
        canonical_json(
            {"format": CACHE_FORMAT_VERSION, "endpoint": endpoint, "request": sanitized, "repeat": repeat}
        )
    )


def _check_identity(endpoint: Any, repeat: Any) -> None:
    if not isinstance(endpoint, str) or not endpoint:
        raise TypeError(f"endpoint must be a non-empty string, not {endpoint!r}")
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
        raise TypeError(f"repeat must be a non-negative int, not {repeat!r}")


def cache_key(endpoint: str, request: Mapping[str, Any], repeat: int = 0) -> str:
    """The 64-hex-digit cache key of one request.

    ``endpoint`` names the API call (:data:`MESSAGES_ENDPOINT`, ``"/v1/messages"``, for every model call);
    ``request`` is everything that shapes the response (model, system, messages, tools, output schema /
    output_config, sampling parameters, thinking settings, ...);
    ``repeat`` tells apart deliberate repeats of the same request (repeat 0, 1, 2 of a flaky-case check).
    Dict key order never matters, nor an int ``temperature``/``top_p`` against the equal float; credentials
    are removed first (:func:`sanitize_request`). Raises ``TypeError``
    or ``ValueError`` if the request is not JSON (a non-string key, an object, NaN).
    """
    _check_identity(endpoint, repeat)
    return _key_of(endpoint, sanitize_request(request), repeat)


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
        raise ValueError(f"not a cache key (64 lowercase hex digits): {key!r}")


def default_cache_dir() -> Path:
    """``$EVALKIT_CACHE_DIR`` if set and non-empty, else ``.evalkit/cache`` under the current directory."""
    env = os.environ.get(CACHE_DIR_ENV, "").strip()
    return (Path(env).expanduser() if env else DEFAULT_CACHE_DIR).absolute()


# --------------------------------------------------------------------------------------------------- entries


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


@dataclass(frozen=True)
class CacheEntry:
    """One cached response, as read from disk."""

    key: str
    endpoint: str
    repeat: int
    request: dict[str, Any]
    response: Any
    meta: dict[str, Any]
    path: Path

    @property
    def model(self) -> str | None:
        model = self.meta.get("model", self.request.get("model"))
        return model if isinstance(model, str) else None

    @property
    def created_at(self) -> datetime | None:
        return _parse_time(self.meta.get("created_at"))

    @property
    def input_tokens(self) -> int | None:
        return _int_or_none(self.meta.get("input_tokens"))

    @property
    def output_tokens(self) -> int | None:
        return _int_or_none(self.meta.get("output_tokens"))

    @property
    def cost_usd(self) -> float | None:
        return _number_or_none(self.meta.get("cost_usd"))


class _Corrupt(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Unreadable(_Corrupt):
    """The file exists but cannot be read (permissions): a lookup treats it as corrupt, :func:`scan` says so."""


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _os_error(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _is_message(response: Any) -> bool:
    """Whether ``response`` is a Messages API message as the runner stores it (the SDK message's JSON)."""
    return (
        isinstance(response, dict)
        and response.get("type") == "message"
        and isinstance(response.get("content"), list)
    )


def _describe_response(response: Any) -> str:
    if not isinstance(response, dict):
        return f"a JSON {type(response).__name__}, expected an object"
    if response.get("type") != "message":
        kind = response.get("type")
        error = response.get("error")
        detail = (
            f": {str(error.get('message'))[:200]}" if isinstance(error, dict) and error.get("message") else ""
        )
        return f'"type" is {kind!r}, expected "message"{detail}'
    return "no content list"


def _read_entry(path: Path, expected_key: str) -> CacheEntry:
    """Load and validate one file. FileNotFoundError if absent; _Corrupt(reason) if present but unusable."""
    try:
        raw = path.read_bytes()
    except NotADirectoryError as exc:  # a parent is a file: nothing can be stored there, so nothing is
        raise FileNotFoundError(str(exc)) from exc
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _Unreadable(f"unreadable ({_os_error(exc)})") from exc
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _Corrupt(f"not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _Corrupt(f"not a JSON object (found {type(data).__name__})")
    version = data.get("format")
    if type(version) is not int or version != CACHE_FORMAT_VERSION:
        raise _Corrupt(f"cache format {version!r}, expected {CACHE_FORMAT_VERSION}")
    if data.get("key") != expected_key:
        raise _Corrupt(f"key mismatch: the file says {data.get('key')!r}, its name says {expected_key}")
    if data.get("response") is None:
        raise _Corrupt("missing response")
    endpoint, repeat, request = data.get("endpoint"), data.get("repeat"), data.get("request")
    if not isinstance(endpoint, str) or not endpoint:
        raise _Corrupt(f"malformed entry (endpoint {endpoint!r})")
    if type(repeat) is not int or repeat < 0:
        raise _Corrupt(f"malformed entry (repeat {repeat!r})")
    if not isinstance(request, dict):
        raise _Corrupt("malformed entry (request is not an object)")
    try:
        actual = legacy = _key_of(endpoint, sanitize_request(request), repeat)
        if actual != expected_key:
            # recorded before an int temperature/top_p was hashed as a float: whole, though no longer looked up
            legacy = _key_of(endpoint, _strip_request(request, floats=False), repeat)
    except (TypeError, ValueError) as exc:  # pragma: no cover - JSON from disk always re-serialises
        raise _Corrupt(f"request cannot be hashed ({exc})") from exc
    if expected_key not in (actual, legacy):
        raise _Corrupt(f"key mismatch: the stored request hashes to {actual} (was the file edited?)")
    response = data["response"]
    if endpoint == MESSAGES_ENDPOINT and not _is_message(response):
        raise _Corrupt(f"the response is not a message ({_describe_response(response)})")
    meta = data.get("meta")
    return CacheEntry(
        key=expected_key,
        endpoint=endpoint,
        repeat=repeat,
        request=request,
        response=response,
        meta=meta if isinstance(meta, dict) else {},
        path=path,
    )


def _serialise(document: Mapping[str, Any]) -> bytes:
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


# --------------------------------------------------------------------------------------------------- stats


@dataclass(frozen=True)
class CacheStats:
    """A snapshot of one :class:`ResponseCache` object's counters.

    A hit is a response the run got without paying for it. An entry written by one of the cache's
    ``paid_batches`` (a Message Batch this run submitted, read back from the cache) was paid for by this run, so
    its lookup counts as a miss and adds nothing to ``tokens_saved`` or ``dollars_saved``; a batch run looks
    each such request up twice (once to collect the batch, once to read the result back), and both lookups are
    misses.

    The counters live in this process: lookups made in forked worker processes (a run with ``processes > 1``)
    are counted in the workers' copies of the cache and never reach the parent's, whose stats then undercount
    (stay 0 if every lookup was in a worker). The run's own totals (``cache_hit`` per result row) are exact.
    """

    hits: int = 0
    """Lookups answered by an entry this run did not pay for."""
    misses: int = 0
    """Lookups that found nothing usable (absent, corrupt, or skipped in refresh mode), and lookups answered by
    an entry of one of ``paid_batches``."""
    writes: int = 0
    corrupt: int = 0
    """Corrupt files found (each also counts as a miss, or raised in replay mode)."""
    tokens_saved: int = 0
    """Input plus output tokens of every hit (not of entries from ``paid_batches``)."""
    dollars_saved: float = 0.0
    """Sum of the hits' recorded ``cost_usd`` (not of entries from ``paid_batches``)."""
    hits_unknown_cost: int = 0
    """Hits whose entry recorded no cost (not included in ``dollars_saved``)."""

    @property
    def lookups(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.lookups if self.lookups else None


class _Counters:
    """Mutable counters behind a lock; read out as an immutable :class:`CacheStats`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hits = self._misses = self._writes = self._corrupt = 0
        self._tokens_saved = self._hits_unknown_cost = 0
        self._dollars_saved = 0.0

    def hit(self, tokens: int, cost_usd: float | None) -> None:
        with self._lock:
            self._hits += 1
            self._tokens_saved += tokens
            if cost_usd is None:
                self._hits_unknown_cost += 1
            else:
                self._dollars_saved += cost_usd

    def miss(self, *, corrupt: bool = False) -> None:
        with self._lock:
            self._misses += 1
            if corrupt:
                self._corrupt += 1

    def write(self) -> None:
        with self._lock:
            self._writes += 1

    def snapshot(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                hits=self._hits,
                misses=self._misses,
                writes=self._writes,
                corrupt=self._corrupt,
                tokens_saved=self._tokens_saved,
                dollars_saved=self._dollars_saved,
                hits_unknown_cost=self._hits_unknown_cost,
            )


# --------------------------------------------------------------------------------------------------- cache


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
        self._directory = (
            Path(directory).expanduser().absolute() if directory is not None else default_cache_dir()
        )
        self._counters = _Counters()
        self.paid_batches: set[str] = set()
        """Message Batches whose responses the current run paid for: reading them back is not a saving."""

    def paid_for(self, entry: CacheEntry) -> bool:
        """Whether ``entry`` came from one of ``paid_batches``: the run's cost, though read from the cache."""
        batch_id = entry.meta.get("batch_id")
        return isinstance(batch_id, str) and batch_id in self.paid_batches

    @property
    def directory(self) -> Path:
        return self._directory

    @property
    def mode(self) -> CacheMode:
        return self._mode

    @property
    def stats(self) -> CacheStats:
        """A consistent snapshot of this object's counters, in this process (see :class:`CacheStats`)."""
        return self._counters.snapshot()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self._directory)!r}, mode={self._mode.value!r})"

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
        """
        path = self.path_for(key)
        if self._mode is CacheMode.OFF:
            return None
        if self._mode is CacheMode.REFRESH:
            self._counters.miss()
            return None
        try:
            entry = _read_entry(path, key)
        except FileNotFoundError:
            self._counters.miss()
            if self._mode is CacheMode.REPLAY:
                raise CacheMiss(key, path, label) from None
            return None
        except _Corrupt as exc:
            self._counters.miss(corrupt=True)
            if self._mode is CacheMode.REPLAY:
                raise CorruptCacheEntry(path, exc.reason) from None
            where = f" (for {label!r})" if label else ""
            warnings.warn(
                f"Corrupt cache entry {path}{where}: {exc.reason}. Treating it as a miss; "
                "the response will be fetched again and the file replaced.",
                CorruptCacheEntryWarning,
                stacklevel=2,
            )
            return None
        if self.paid_for(entry):
            self._counters.miss()  # this run's own batch result: paid for, not saved
        else:
            self._counters.hit((entry.input_tokens or 0) + (entry.output_tokens or 0), entry.cost_usd)
        return entry

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
    ) -> None:
        """Store ``response`` for the request whose key is ``key`` (a no-op in replay and off modes).

        ``key`` must be ``cache_key(endpoint, request, repeat)``. ``meta`` may carry ``model``,
        ``input_tokens``, ``output_tokens``, ``cost_usd`` and any other JSON; ``created_at`` (UTC) and ``model``
        (from the request) are filled in when absent. The write is atomic and replaces any existing entry.
        ``verify=False`` skips recomputing the key, for a caller that has just computed it from the same request.
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
        # verify=False is for callers that computed the key with cache_key() from this very request
        expected = _key_of(endpoint, sanitized, repeat) if verify else key
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
        try:
            payload = _serialise(document)
        except (TypeError, ValueError) as exc:
            exc.add_note(f"while writing cache entry {key}: the response and meta must be JSON")
            raise
        path = self.path_for(key)
        try:
            # no fsync: a cache entry torn by a power cut is detected as corrupt and refetched
            atomic_write_bytes(path, payload, durable=False)
        except OSError as exc:
            raise self._not_writable(exc) from exc
        self._counters.write()

    def check_writable(self) -> None:
        """Fail early, before a run starts, if entries could not be written.

        Creates the directory if needed and writes and removes a probe file. Raises :class:`CacheError` naming
        the directory and the fix. A no-op in replay and off modes, which never write.
        """
        if self._mode in (CacheMode.OFF, CacheMode.REPLAY):
            return
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


# --------------------------------------------------------------------------------------------------- maintenance


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
    for f in walk.files:
        if f.entry is None:
            (unreadable if f.unreadable else corrupt)[f.path] = f.problem or "unusable"
            continue
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
