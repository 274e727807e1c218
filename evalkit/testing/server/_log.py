"""The request log: what the server keeps of each request (never a secret)."""

from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from evalkit.testing.server._faults import FaultKind
from evalkit.testing.server._limits import ServerLimits

__all__ = ["LOGGED_HEADER_VALUES", "LogEntry", "RequestLog", "RequestRecord"]

# Header values safe to keep in the request log; everything else is kept by name only.
LOGGED_HEADER_VALUES = frozenset(
    {
        "anthropic-version",
        "anthropic-beta",
        "content-type",
        "accept",
        "user-agent",
        "idempotency-key",
        "x-stainless-retry-count",
        "x-stainless-helper",
        "x-stainless-helper-method",
        "x-stainless-timeout",
    }
)


@dataclass(frozen=True)
class RequestRecord:
    """One request as the server saw it. Secrets are never kept: auth headers are logged by name only.

    ``body`` is the JSON body as received (None when absent or not JSON), a fresh copy in each snapshot:
    neither a responder nor the reader of a snapshot can change what the log holds. A body larger than the log
    keeps (``ServerLimits.log_body``) is not kept: ``body`` is None and ``body_digest`` is its ``sha256:<hex>``.
    ``body_length`` is the body's size in bytes as received (0 for a body that was refused unread).
    ``status`` is None while a request is in flight and for faults that send no response
    (``connection_reset``, ``timeout``). Times are ``time.monotonic()`` seconds. ``rate_limited`` is true for a
    request the server's rate limits answered 429 (an injected ``rate_limit`` fault is in ``fault`` instead).
    """

    index: int
    method: str
    path: str
    body: Any
    header_names: tuple[str, ...]
    headers: Mapping[str, str]
    auth: Literal["x-api-key", "bearer"] | None
    fault: FaultKind | None
    status: int | None
    started_at: float
    finished_at: float | None
    rate_limited: bool = False
    body_length: int = 0
    body_digest: str | None = None

    @property
    def auth_present(self) -> bool:
        return self.auth is not None

    @property
    def duration_s(self) -> float | None:
        return None if self.finished_at is None else self.finished_at - self.started_at


@dataclass
class LogEntry:
    """The server's mutable entry for one request; readers get ``snapshot()`` copies."""

    index: int
    method: str
    path: str
    raw: bytes  # the JSON body as received (b"" when absent, not JSON or too large): bytes, so nothing can change it
    header_names: tuple[str, ...]
    headers: dict[str, str]
    auth: Literal["x-api-key", "bearer"] | None
    fault: FaultKind | None = None
    status: int | None = None
    started_at: float = 0.0
    finished_at: float | None = None
    rate_limited: bool = False
    body_length: int = 0
    body_digest: str | None = None

    def snapshot(self) -> RequestRecord:
        return RequestRecord(
            index=self.index,
            method=self.method,
            path=self.path,
            body=json.loads(self.raw) if self.raw else None,  # a fresh copy for each reader
            header_names=self.header_names,
            headers=dict(self.headers),
            auth=self.auth,
            fault=self.fault,
            status=self.status,
            started_at=self.started_at,
            finished_at=self.finished_at,
            rate_limited=self.rate_limited,
            body_length=self.body_length,
            body_digest=self.body_digest,
        )


def kept_body(raw: bytes, limits: ServerLimits) -> tuple[bytes, str | None]:
    """What the log keeps of a JSON body: the body, or (when larger than ``log_body``) nothing and its digest."""
    if len(raw) <= min(limits.log_body, limits.log_bytes):
        return raw, None
    return b"", "sha256:" + hashlib.sha256(raw).hexdigest()


class RequestLog:
    """The newest requests, as many as the limits allow (count and body bytes); the caller holds the lock."""

    def __init__(self, limits: ServerLimits) -> None:
        self.limits = limits
        self.entries: deque[LogEntry] = deque()
        self.bytes = 0
        self.dropped = 0

    def append(self, entry: LogEntry) -> None:
        self.entries.append(entry)
        self.bytes += len(entry.raw)
        while len(self.entries) > self.limits.log_requests or self.bytes > self.limits.log_bytes:
            self.bytes -= len(self.entries.popleft().raw)
            self.dropped += 1

    def clear(self) -> None:
        self.entries.clear()
        self.bytes = 0
