"""Injected faults: the kinds, and the plan of which requests fail."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

__all__ = ["FAULT_KINDS", "FaultKind", "FaultPlan", "normalise_fault"]

FaultKind = Literal[
    "rate_limit", "overloaded", "server_error", "connection_reset", "timeout", "malformed", "spend_limit"
]
"""What an injected fault does:

- ``rate_limit``: 429 ``rate_limit_error`` with a ``retry-after`` header,
- ``overloaded``: 529 ``overloaded_error``,
- ``server_error``: 500 ``api_error``,
- ``connection_reset``: the socket is closed (RST) without a response,
- ``timeout``: the server holds the request unanswered until the client gives up (closes the connection),
  the server stops, or ``hang_s`` seconds pass (then closes without a response),
- ``malformed``: 200 with a truncated JSON body,
- ``spend_limit``: 429 ``rate_limit_error`` saying the account's monthly spend limit is reached, with no
  ``retry-after`` (as the API answers every request once the limit is reached).
"""

FAULT_KINDS: tuple[FaultKind, ...] = (
    "rate_limit",
    "overloaded",
    "server_error",
    "connection_reset",
    "timeout",
    "malformed",
)
"""The faults a run can retry through (``spend_limit`` is not one: it stops a run)."""

_QUICK_FAULT_KINDS: tuple[FaultKind, ...] = ("rate_limit", "overloaded", "server_error", "connection_reset")

_FAULT_ALIASES: dict[str, FaultKind] = {
    "429": "rate_limit",
    "529": "overloaded",
    "500": "server_error",
    "reset": "connection_reset",
    "malformed_json": "malformed",
}


def normalise_fault(kind: str | int) -> FaultKind:
    """A fault kind from its name or alias (``429``, ``reset``, ...); ValueError for an unknown one."""
    text = str(kind)
    for known in (*FAULT_KINDS, "spend_limit"):
        if text == known:
            return known
    if text in _FAULT_ALIASES:
        return _FAULT_ALIASES[text]
    raise ValueError(f"unknown fault kind {kind!r}; expected one of {', '.join(FAULT_KINDS)}, spend_limit")


@dataclass(frozen=True)
class FaultPlan:
    """Which requests fail, and how.

    ``schedule`` maps a request index (0-based, in order of arrival, counting every request the server
    receives) to a fault kind. Other requests fail with probability ``rate``, with a kind drawn from
    ``kinds``; the draw for each index depends only on ``seed`` and the index, so a plan is reproducible
    whatever the thread timing. The default kinds are the ones that fail fast (no ``timeout`` or
    ``malformed``); name them to include them.
    """

    rate: float = 0.0
    kinds: Sequence[FaultKind | str] = _QUICK_FAULT_KINDS
    seed: int = 0
    schedule: Mapping[int, FaultKind | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], got {self.rate}")
        kinds = tuple(normalise_fault(k) for k in self.kinds)
        if self.rate > 0 and not kinds:
            raise ValueError("a fault rate needs at least one fault kind")
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "schedule", {int(i): normalise_fault(k) for i, k in self.schedule.items()})

    def fault_for(self, index: int) -> FaultKind | None:
        """The fault for the request with this index, or None."""
        scheduled = self.schedule.get(index)
        if scheduled is not None:
            return cast(FaultKind, scheduled)
        if self.rate <= 0:
            return None
        rng = random.Random(f"evalkit-fault:{self.seed}:{index}")
        if rng.random() < self.rate:
            return cast(FaultKind, rng.choice(list(self.kinds)))
        return None
