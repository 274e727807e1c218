"""Adaptive rate limiting for the Messages calls of one client: pace by the API's headers, back off on 429.

The API answers every call with ``anthropic-ratelimit-<resource>-{limit,remaining,reset}`` headers, for requests
and tokens per minute, refilled continuously. ``RateLimiter`` keeps an estimate of what this process may still
spend of each (the last ``remaining`` it was told, less what it has sent since, plus the refill since), and holds
a call back until its cost is there: the calls are paced before they hit the wall, not after. A 429 still can
come (a first burst before any header, another client on the same key): then the call waits what ``retry-after``
says and is sent again, and the whole client backs off, AIMD style: the number of calls it lets out at once is
halved (at most once a second) and grows back by one per round of successful calls, faster once no 429 has come
for a few seconds.

Worker processes of one run share one API key: each paces to its ``share`` of the limits (its threads over the
run's concurrency), so together they keep to the limit the API states.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["LimiterStats", "RateLimiter", "Ticket", "retry_after_s"]

_PREFIX = "anthropic-ratelimit-"
# resources paced by their headers: requests (each call costs 1) and input tokens (estimated from the body)
_RESOURCES = ("requests", "input-tokens")
# refill assumed at this share of the stated rate, so that the server's bucket, once drained, fills a little
# and absorbs the jitter of calls from several threads and processes
_MARGIN = 0.95
_DECREASE_EVERY_S = 1.0
_CALM_AFTER_S = 2.0
_MAX_RETRY_AFTER_S = 60.0


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds a 429 asks to wait: ``retry-after-ms``, else ``retry-after`` (seconds); None when it says not."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return min(seconds, _MAX_RETRY_AFTER_S)
    return None


@dataclass
class _Budget:
    """What this process may spend of one resource now, by its own estimate."""

    rate: float  # units per second for this process (the stated limit per minute / 60, times the share)
    credit: float
    cap: float
    updated: float
    spent: float = 0.0  # everything sent since the budget was made, to discount replies that are out of date
    as_of: float = -math.inf  # when the call whose reply set the credit was sent: older replies are stale

    def refill(self, now: float) -> None:
        self.credit = min(self.cap, self.credit + (now - self.updated) * self.rate * _MARGIN)
        self.updated = now

    def wait_for(self, cost: float) -> float:
        need = min(cost, self.cap)
        if self.credit >= need:
            return 0.0
        return (need - self.credit) / (self.rate * _MARGIN)


@dataclass
class Ticket:
    """One call let out by ``acquire``: what it cost, and how much had been spent when it went."""

    sent_at: float
    costs: dict[str, float]
    spent_before: dict[str, float] = field(default_factory=dict)


@dataclass
class LimiterStats:
    rate_limited: int = 0
    """429s received."""
    waited_s: float = 0.0
    """Seconds calls waited on retry-after, in all."""


class RateLimiter:
    """Paces one client's calls by the rate-limit headers and backs off on 429; shared by its threads.

    Parameters
    ----------
    max_concurrency: the most calls it lets out at once (the window grows back to this).
    share: this process's share of the API's limits (1.0 alone; a worker's threads over the run's concurrency).
    clock: monotonic seconds (for tests).
    """

    def __init__(
        self,
        *,
        max_concurrency: int,
        share: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"share must be in (0, 1], got {share!r}")
        self.max_concurrency = max_concurrency
        self.share = share
        self._clock = clock
        self._cond = threading.Condition()
        self._window = float(max_concurrency)
        self._in_flight = 0
        self._pause_until = 0.0
        self._last_decrease = -math.inf
        self._last_429 = -math.inf
        self._budgets: dict[str, _Budget] = {}
        self.stats = LimiterStats()

    @property
    def window(self) -> int:
        """How many calls it lets out at once now."""
        return max(1, int(self._window))

    def acquire(self, input_tokens: int) -> Ticket:
        """Wait until a call may go out, then count it as sent."""
        costs = {"requests": 1.0, "input-tokens": float(input_tokens)}
        with self._cond:
            while True:
                now = self._clock()
                wait = self._pause_until - now
                for name, budget in self._budgets.items():
                    budget.refill(now)
                    wait = max(wait, budget.wait_for(costs[name]))
                if self._in_flight >= self.window:
                    self._cond.wait(timeout=0.5)  # a release notifies
                    continue
                if wait <= 0:
                    break
                self._cond.wait(timeout=wait)
            self._in_flight += 1
            ticket = Ticket(sent_at=now, costs=costs)
            for name, budget in self._budgets.items():
                ticket.spent_before[name] = budget.spent
                budget.spent += costs[name]
                budget.credit -= min(costs[name], budget.cap)
            return ticket

    def release(self, ticket: Ticket, status: int | None, headers: Mapping[str, str]) -> float | None:
        """Account for a call's reply (``status`` None: no reply). Returns the seconds to wait before sending it
        again when it was refused with 429 and told when to come back (``retry-after``), else None: a 429 that
        does not say is left to the SDK's retries, as any retryable error."""
        with self._cond:
            now = self._clock()
            self._in_flight -= 1
            known = self._observe(ticket, headers, now)
            delay = None
            if status == 429:
                self.stats.rate_limited += 1
                self._last_429 = now
                if now - self._last_decrease >= _DECREASE_EVERY_S:
                    self._window = max(1.0, self._window / 2)
                    self._last_decrease = now
                delay = retry_after_s(headers)
                if delay is not None:
                    if not known:  # nothing to pace by: everyone waits what the API asked
                        self._pause_until = max(self._pause_until, now + delay)
                    # spread the retries of a burst refused together, so they do not come back as one burst
                    delay *= 1.0 + 0.2 * random.random()
            elif status is not None and status < 400:
                calm = now - self._last_429 >= _CALM_AFTER_S
                self._window = min(
                    float(self.max_concurrency), self._window + (1.0 if calm else 1.0 / self._window)
                )
            self._cond.notify_all()
            return delay

    def waited(self, seconds: float) -> None:
        with self._cond:
            self.stats.waited_s += seconds

    def _observe(self, ticket: Ticket, headers: Mapping[str, str], now: float) -> bool:
        """Take what the reply's rate-limit headers say; False when it had none."""
        seen = False
        for name in _RESOURCES:
            try:
                limit = float(headers[f"{_PREFIX}{name}-limit"])
                remaining = float(headers[f"{_PREFIX}{name}-remaining"])
            except (KeyError, ValueError):
                continue
            if not (limit > 0 and remaining >= 0):
                continue
            seen = True
            rate = limit / 60.0 * self.share
            budget = self._budgets.get(name)
            if budget is None:
                budget = self._budgets[name] = _Budget(rate, 0.0, 0.0, now)
            budget.refill(now)
            budget.rate = rate
            if ticket.sent_at < budget.as_of:
                continue  # a newer reply has spoken already
            budget.as_of = ticket.sent_at
            # what the server had left when it took this call, less what this process sent after it, plus the
            # refill since
            later = budget.spent - ticket.spent_before.get(name, budget.spent)
            if name not in ticket.spent_before:  # the first reply with headers: everything sent is in flight
                later = budget.spent
            budget.cap = max(budget.cap, remaining * self.share, 1.0)
            budget.credit = min(
                budget.cap, remaining * self.share - later + (now - ticket.sent_at) * rate * _MARGIN
            )
        return seen
