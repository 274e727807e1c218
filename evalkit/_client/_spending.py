"""A spending cap: no call is sent whose worst case, with what was spent and what is in flight, would pass it.

A call's worst case is its input at the dearest input price it can be billed (a prompt-cache write of the
lifetime it asks for; at most one token per byte of its text) plus ``max_tokens`` of output. Each call reserves its worst case before it is sent and settles to
what it cost once answered, so the calls in flight never add up past the cap: a call that does not fit waits for those in flight to settle,
and is refused only when it does not fit with none in flight. The first refusal is final: the run stops sending,
finishes what is in flight and says how to resume with a higher cap. So a run stops with less than one call's
worst case left under the cap. The counters live in
shared memory, so the forked worker processes of a run keep to the one cap.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Mapping
from typing import Any

from evalkit._client import _pricing as pricing

__all__ = ["SpendingCap", "worst_case_usd"]

_TOKENS_PER_MESSAGE = 16
_SETTLE_POLL_S = 0.005
_BASE_TOKENS = 64


def _request_bytes(request: Mapping[str, Any]) -> int:
    parts = [
        request.get("system"),
        request.get("messages"),
        request.get("tools"),
        request.get("output_config"),
    ]
    return sum(len(json.dumps(p, ensure_ascii=False).encode("utf-8", "surrogatepass")) for p in parts if p)


def worst_case_usd(
    request: Mapping[str, Any], price: pricing.ModelPrice, *, batch: bool = False, ttl: str | None = "1h"
) -> float:
    """The most one request can cost: each byte of its text a token at the dearest input price it can be billed
    (a prompt-cache write of lifetime `ttl`; None: prompt caching off), and ``max_tokens`` of output.

    >>> price = pricing.ModelPrice.from_rates(3.0, 15.0)
    >>> request = {"max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}
    >>> round(worst_case_usd(request, price, ttl="5m"), 6)  # 113 tokens at $3.75/M, 100 at $15/M
    0.001931
    """
    n_messages = len(request.get("messages") or [])
    tokens_in = _request_bytes(request) + _TOKENS_PER_MESSAGE * n_messages + _BASE_TOKENS
    write = {"5m": price.cache_write, "1h": price.cache_write_1h}.get(ttl or "", price.input)
    dearest = max(price.input, write)
    total = (tokens_in * dearest + int(request.get("max_tokens") or 0) * price.output) / 1_000_000
    return total * pricing.BATCH_DISCOUNT if batch else total


class SpendingCap:
    """``cap_usd`` for what calls may cost, ``spent_usd`` of it spent before (a resumed run's earlier calls)."""

    def __init__(self, cap_usd: float, spent_usd: float = 0.0) -> None:
        if not cap_usd > 0:
            raise ValueError("a spending cap is a positive number of dollars")
        self.cap_usd = float(cap_usd)
        methods = multiprocessing.get_all_start_methods()
        mp = multiprocessing.get_context("fork" if "fork" in methods else None)
        # spent, reserved, refused (1.0 once a call was refused)
        self._values = mp.RawArray("d", [float(spent_usd), 0.0, 0.0])
        self._lock = mp.Lock()

    @property
    def spent_usd(self) -> float:
        return float(self._values[0])

    @property
    def in_flight_usd(self) -> float:
        return float(self._values[1])

    @property
    def refused(self) -> bool:
        """Whether a call was refused: no more are sent after that."""
        return bool(self._values[2])

    def reserve(self, worst_usd: float) -> bool:
        """Hold `worst_usd` for a call about to be sent. While it does not fit beside the calls in flight, wait for
        them to settle (they mostly cost far less than their worst case); False, and every later call refused,
        once it does not fit with nothing in flight."""
        while True:
            with self._lock:
                values = self._values
                if values[2]:
                    return False
                if values[0] + values[1] + worst_usd <= self.cap_usd:
                    values[1] += worst_usd
                    return True
                if values[1] <= 0.0:
                    values[2] = 1.0
                    return False
            time.sleep(_SETTLE_POLL_S)

    def settle(self, worst_usd: float, cost_usd: float | None) -> None:
        """A call reserved with `worst_usd` is over: it cost `cost_usd` (None: unknown, taken as its worst)."""
        with self._lock:
            values = self._values
            values[1] = max(0.0, values[1] - worst_usd)
            if values[1] < 1e-12:
                values[1] = 0.0  # float dust must not keep a refused call waiting
            values[0] += worst_usd if cost_usd is None else cost_usd
