"""Keeping credentials out of what the client prints: API keys, and a user name or password in a base URL."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from urllib.parse import unquote

REDACTED = "[redacted]"
_SECRET_MIN_LENGTH = 6
"""Shorter strings are not scrubbed: replacing every "ab" in a message would garble it and hide nothing."""


def _split(url: str) -> tuple[str, str, str] | None:
    """``(before, userinfo, after)`` of a URL with a user info part, else None; never raises (a malformed URL
    still has its credentials removed)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    info, at, _host = rest[:end].rpartition("@")
    if not at:
        return None
    return scheme + sep, info, rest[len(info) + 1 :]


def redact_url(url: str | None) -> str | None:
    """``url`` with any user name and password replaced by ``[redacted]`` (None stays None).

    Parameters:
        url: a base URL such as ``https://user:secret@proxy.example``.

    Returns:
        The URL safe to print: ``https://[redacted]@proxy.example``.
    """
    parts = _split(url) if url is not None else None
    if parts is None:
        return url
    return f"{parts[0]}{REDACTED}@{parts[2]}"


def url_secrets(*urls: str | None) -> list[str]:
    """The credentials in these URLs (the whole user info, its user name and password, as written and decoded)."""
    found: list[str] = []
    for url in filter(None, urls):
        parts = _split(url)
        if parts is None:
            continue
        info = parts[1]
        user, _, password = info.partition(":")
        found.extend(part for part in (info, user, password) if part)
        found.extend(unquote(part) for part in (info, user, password) if part and unquote(part) != part)
    return found


def base_url_secrets(base_url: str | None) -> list[str]:
    """The credentials in the base URL a client sends to: ``base_url``, or ``ANTHROPIC_BASE_URL`` too."""
    return url_secrets(base_url, os.environ.get("ANTHROPIC_BASE_URL"))


def secret_forms(secrets: Iterable[str | None]) -> list[str]:
    """Each secret in every form an error text could show it: as is, stripped, and escaped; longest first."""
    forms: set[str] = set()
    for secret in filter(None, secrets):
        for text in (secret, secret.strip()):
            forms.update(
                (
                    text,
                    repr(text)[1:-1],  # a str's repr: \n, \t, \\ and quotes escaped
                    repr(text.encode("utf-8", "backslashreplace"))[2:-1],  # a bytes repr: b'...'
                    json.dumps(text)[1:-1],
                )
            )
    # the longest first, so that no part of a longer form is left behind
    return sorted((s for s in forms if len(s) >= _SECRET_MIN_LENGTH), key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every one of ``secrets`` (see :func:`secret_forms`) replaced by ``[redacted]``."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text
