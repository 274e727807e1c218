"""One cache entry: its file format, and reading and validating a file."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit._cache._keys import (
    CACHE_FORMAT_VERSION,
    MESSAGES_ENDPOINT,
    _key_of,
    _strip_request,
    sanitize_request,
)
from evalkit._cache._layout import _os_error
from evalkit._hashing import canonical_json, sha256_hex


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
    base_url: str | None = None
    """The server that answered, when it was not the default API endpoint (part of the key)."""
    digest: str | None = None
    """The digest of the response recorded with it (checked on every read); None for an entry recorded before
    entries carried one, whose response is used unverified."""

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


class _Edited(_Corrupt):
    """The response does not match the digest recorded with it: the file was changed after it was written."""


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


DIGEST_PREFIX = "sha256:"


def response_digest(key: str, response: Any) -> str:
    """The digest an entry records of its response: ``sha256:`` and the hash of the key and the response.

    The key is hashed with the response, so a response copied from another entry's file does not match."""
    return DIGEST_PREFIX + sha256_hex(canonical_json({"key": key, "response": response}))


_READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)


def _read_bytes(path: Path) -> bytes:
    """The file's bytes; a symbolic link is never followed (ELOOP, or refused where O_NOFOLLOW is missing)."""
    if not hasattr(os, "O_NOFOLLOW") and path.is_symlink():
        raise _Corrupt("a symbolic link: the cache never follows one; remove it")
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Corrupt("a symbolic link: the cache never follows one; remove it") from exc
        raise
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _read_entry(path: Path, expected_key: str) -> CacheEntry:
    """Load and validate one file. FileNotFoundError if absent; _Corrupt(reason) if present but unusable."""
    try:
        raw = _read_bytes(path)
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
    base_url, digest = data.get("base_url"), data.get("digest")
    if base_url is not None and (not isinstance(base_url, str) or not base_url):
        raise _Corrupt(f"malformed entry (base_url {base_url!r})")
    if digest is not None and not isinstance(digest, str):
        raise _Corrupt(f"malformed entry (digest {digest!r})")
    try:
        actual = legacy = _key_of(endpoint, sanitize_request(request), repeat, base_url)
        if actual != expected_key:
            # recorded before an int temperature/top_p was hashed as a float: whole, though no longer looked up
            legacy = _key_of(endpoint, _strip_request(request, floats=False), repeat, base_url)
    except (TypeError, ValueError) as exc:  # pragma: no cover - JSON from disk always re-serialises
        raise _Corrupt(f"request cannot be hashed ({exc})") from exc
    if expected_key not in (actual, legacy):
        raise _Corrupt(f"key mismatch: the stored request hashes to {actual} (was the file edited?)")
    response = data["response"]
    if digest is not None and digest != response_digest(expected_key, response):
        raise _Edited(
            "its response does not match the digest recorded with it, so the response was changed after it "
            "was recorded"
        )
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
        base_url=base_url,
        digest=digest,
    )


def _serialise(document: Mapping[str, Any]) -> bytes:
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")
