"""Cache keys: the request with its credentials removed, hashed with the endpoint and repeat."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from evalkit._cache._origin import api_origin
from evalkit._hashing import canonical_json, sha256_hex

MESSAGES_ENDPOINT = "/v1/messages"
"""The endpoint every cached model call goes to; part of each cache key."""

CACHE_FORMAT_VERSION = 1
"""Bumped whenever the key derivation or the file layout changes; entries of another version are ignored."""

_KEY_RE = re.compile(r"[0-9a-f]{64}")


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


def _key_of(endpoint: str, sanitized: Mapping[str, Any], repeat: int, origin: str | None = None) -> str:
    document: dict[str, Any] = {
        "format": CACHE_FORMAT_VERSION,
        "endpoint": endpoint,
        "request": sanitized,
        "repeat": repeat,
    }
    if origin is not None:
        # only a server other than the default one joins the key, so the default's keys never change
        document["base_url"] = origin
    return sha256_hex(canonical_json(document))


def _check_identity(endpoint: Any, repeat: Any) -> None:
    if not isinstance(endpoint, str) or not endpoint:
        raise TypeError(f"endpoint must be a non-empty string, not {endpoint!r}")
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
        raise TypeError(f"repeat must be a non-negative int, not {repeat!r}")


def cache_key(
    endpoint: str, request: Mapping[str, Any], repeat: int = 0, *, base_url: str | None = None
) -> str:
    """The 64-hex-digit cache key of one request.

    ``endpoint`` names the API call (:data:`MESSAGES_ENDPOINT`, ``"/v1/messages"``, for every model call);
    ``request`` is everything that shapes the response (model, system, messages, tools, output schema /
    output_config, sampling parameters, thinking settings, ...);
    ``repeat`` tells apart deliberate repeats of the same request (repeat 0, 1, 2 of a flaky-case check).
    Dict key order never matters, nor an int ``temperature``/``top_p`` against the equal float; credentials
    are removed first (:func:`sanitize_request`). Raises ``TypeError``
    or ``ValueError`` if the request is not JSON (a non-string key, an object, NaN).

    The server is part of the key when it is not the default API endpoint: ``base_url`` (the client's base
    URL) or, when it is None, ``ANTHROPIC_BASE_URL``, the variable the SDK reads too. So answers recorded
    against a local server or a proxy are never replayed as the real API's, and keys for the default endpoint
    are the ones they always were (see :func:`api_origin`). A caller whose client was given an explicit
    base URL passes it here.
    """
    _check_identity(endpoint, repeat)
    return _key_of(endpoint, sanitize_request(request), repeat, api_origin(base_url))


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
        raise ValueError(f"not a cache key (64 lowercase hex digits): {key!r}")
