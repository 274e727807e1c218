"""The HTTP transport under each SDK client: Messages calls paced by the client's ``RateLimiter``.

It sits below the SDK's retry loop, so a call refused with 429 is sent again here, after the wait ``retry-after``
asks for, without spending the SDK's retries (``max_retries``) on it; only once a call has waited
``rate_limit_wait`` seconds in all on 429s is the refusal handed up, for the SDK to retry as usual and then fail.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx2

from evalkit._client._limiter import RateLimiter

__all__ = ["PacedTransport", "is_spend_limit", "new_call_waits", "pace"]

# how the API words a refusal that waiting will not lift: the account's spend limit, or no credit left
_SPEND_LIMIT_WORDS = ("spend limit", "usage limits", "credit balance is too low")


def is_spend_limit(status: int | None, text: str) -> bool:
    """Whether an error reply says the account may spend no more (a 429 without ``retry-after``, or a 400)."""
    lowered = text.lower()
    return status in (400, 402, 429) and any(words in lowered for words in _SPEND_LIMIT_WORDS)


class _CallWaits(threading.local):
    waited: float = 0.0


class PacedTransport(httpx2.BaseTransport):
    """Wraps a transport: ``POST .../messages`` goes through the limiter; anything else goes straight through."""

    def __init__(
        self, inner: httpx2.BaseTransport, limiter: RateLimiter, max_wait: float, calls: _CallWaits
    ) -> None:
        self._inner = inner
        self._limiter = limiter
        self._max_wait = max_wait
        self._calls = calls

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST" or not request.url.path.endswith("/messages"):
            return self._inner.handle_request(request)
        try:
            tokens = len(request.content) // 4  # about the API's count: a token per four characters
        except httpx2.RequestNotRead:
            tokens = 0
        limiter = self._limiter
        while True:
            ticket = limiter.acquire(tokens)
            try:
                response = self._inner.handle_request(request)
            except BaseException:
                limiter.release(ticket, None, {})
                raise
            if response.status_code in (400, 402, 429) and "retry-after" not in response.headers:
                response.read()
                if is_spend_limit(response.status_code, response.text):
                    # no wait lifts it: the SDK is told not to retry (its documented header), nor is it paced
                    limiter.release(ticket, None, {})
                    response.headers["x-should-retry"] = "false"
                    return response
            delay = limiter.release(ticket, response.status_code, response.headers)
            if delay is None or self._calls.waited + delay > self._max_wait:
                return response
            response.read()
            response.close()
            time.sleep(delay)
            self._calls.waited += delay
            limiter.waited(delay)

    def close(self) -> None:
        self._inner.close()


def pace(http: Any, limiter: RateLimiter, max_wait: float, calls: _CallWaits) -> None:
    """Put the limiter under an httpx client's transports (its default one and any proxy's)."""
    inner = getattr(http, "_transport", None)
    if isinstance(inner, httpx2.BaseTransport):
        http._transport = PacedTransport(inner, limiter, max_wait, calls)
    mounts = getattr(http, "_mounts", None)
    if isinstance(mounts, dict):
        for pattern, transport in list(mounts.items()):
            if isinstance(transport, httpx2.BaseTransport):
                mounts[pattern] = PacedTransport(transport, limiter, max_wait, calls)


def new_call_waits() -> _CallWaits:
    return _CallWaits()
