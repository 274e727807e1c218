"""Rate limits like the API's: requests and input tokens per minute, as token buckets refilled continuously."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from evalkit.testing.server._clock import rfc3339

__all__ = ["RateDecision", "RateLimiter", "RateLimits"]


@dataclass(frozen=True)
class RateLimits:
    """Requests per minute (``rpm``) and input tokens per minute (``itpm``); None for no limit.

    Each bucket holds ``burst_s`` seconds' worth of its limit (at least one request), and refills at the limit
    per minute, continuously: the API enforces its limits over short intervals, so a burst above the per-second
    rate is refused even when the minute's total is not reached. ``clock`` (monotonic seconds) is for tests.
    """

    rpm: int | None = None
    itpm: int | None = None
    burst_s: float = 1.0
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def __post_init__(self) -> None:
        for name in ("rpm", "itpm"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name}: must be a whole number above 0, got {value!r}")
        if not self.burst_s > 0:
            raise ValueError(f"burst_s: must be above 0, got {self.burst_s!r}")


@dataclass
class _Bucket:
    limit: int  # per minute
    capacity: float
    level: float
    updated: float

    @property
    def rate(self) -> float:
        return self.limit / 60.0

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
        self.updated = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` can be taken (a request larger than the bucket waits for a full bucket)."""
        need = min(amount, self.capacity)
        return max(0.0, (need - self.level) / self.rate)


@dataclass(frozen=True)
class RateDecision:
    """Whether a request may go ahead; ``retry_after`` whole seconds when not; the headers to send either way."""

    allowed: bool
    retry_after: int
    headers: dict[str, str]


class RateLimiter:
    """The server's buckets; thread-safe."""

    def __init__(self, limits: RateLimits) -> None:
        self.limits = limits
        now = limits.clock()
        self._buckets: dict[str, _Bucket] = {}
        for name, limit in (("requests", limits.rpm), ("input-tokens", limits.itpm)):
            if limit is not None:
                capacity = max(1.0, limit * limits.burst_s / 60.0)
                self._buckets[name] = _Bucket(limit, capacity, capacity, now)
        self._lock = threading.Lock()

    def take(self, input_tokens: int) -> RateDecision:
        """Take one request and ``input_tokens`` from the buckets, or refuse and take nothing."""
        amounts = {"requests": 1.0, "input-tokens": float(input_tokens)}
        with self._lock:
            now = self.limits.clock()
            for bucket in self._buckets.values():
                bucket.refill(now)
            wait = max((b.wait_for(amounts[n]) for n, b in self._buckets.items()), default=0.0)
            if wait <= 0:
                for name, bucket in self._buckets.items():
                    bucket.level -= amounts[name]
            headers = self._headers()
        if wait > 0:
            return RateDecision(False, max(1, math.ceil(wait)), headers)
        return RateDecision(True, 0, headers)

    def peek(self) -> dict[str, str]:
        """The headers for a response that takes nothing from the buckets."""
        with self._lock:
            now = self.limits.clock()
            for bucket in self._buckets.values():
                bucket.refill(now)
            return self._headers()

    def _headers(self) -> dict[str, str]:
        wall = datetime.now(UTC)
        headers: dict[str, str] = {}
        for name, bucket in self._buckets.items():
            full_in = max(0.0, (bucket.capacity - bucket.level) / bucket.rate)
            headers[f"anthropic-ratelimit-{name}-limit"] = str(bucket.limit)
            headers[f"anthropic-ratelimit-{name}-remaining"] = str(max(0, math.floor(bucket.level)))
            headers[f"anthropic-ratelimit-{name}-reset"] = rfc3339(
                (wall + timedelta(seconds=math.ceil(full_in))).replace(microsecond=0)
            )
        return headers
