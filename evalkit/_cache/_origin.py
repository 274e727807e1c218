"""Which server a cached response came from: the API base URL, as a cache key records it.

The default endpoint is recorded as nothing at all, so the keys of requests to it are the keys they always had;
any other base URL (a local server, a proxy, a gateway) is part of the key, so its answers are never replayed as
the real API's.
"""

from __future__ import annotations

import functools
import os
from urllib.parse import urlsplit, urlunsplit

BASE_URL_ENV = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL = "https://api.anthropic.com"
_DEFAULT_PORTS = {"http": 80, "https": 443}


@functools.lru_cache(maxsize=64)  # every cache key asks, for one or two URLs a run
def _normalise(url: str) -> str:
    """``url`` without credentials, query or fragment, lower-case scheme and host, default port and trailing
    slash dropped: spellings of one server give one string."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:  # not a URL the SDK could send to either; recorded as given, less any credentials
        return text.rsplit("@", 1)[-1].rstrip("/")
    if not parts.scheme or not parts.hostname:
        return text.rsplit("@", 1)[-1].rstrip("/")
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    return urlunsplit((scheme, host, parts.path.rstrip("/"), "", ""))


def api_origin(base_url: str | None = None) -> str | None:
    """The base URL a cache key records for a request sent to ``base_url``.

    Parameters:
        base_url: the client's base URL; None (the default) reads ``ANTHROPIC_BASE_URL``, as the SDK does.

    Returns:
        None for the default endpoint (``https://api.anthropic.com``, or no base URL at all), else the
        normalised URL: no user name, password, query or fragment (credentials never reach a key or a file).
    """
    if base_url is None:
        base_url = os.environ.get(BASE_URL_ENV)
    if base_url is None or not base_url.strip():
        return None
    origin = _normalise(base_url)
    return None if origin in ("", DEFAULT_BASE_URL) else origin
