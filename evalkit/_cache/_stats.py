"""A cache's hit, miss and saving counters."""

from __future__ import annotations

import threading
from dataclasses import dataclass


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
