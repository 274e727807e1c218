"""Test helpers: a local Anthropic-compatible server and pytest fixtures for it.

``from evalkit.testing import LocalAnthropicServer`` works as usual; the names are loaded on first use so
that ``python -m evalkit.testing.server`` runs without importing the module twice.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.testing.server import (
        FAULT_KINDS,
        PINNED_MODEL_IDS,
        FaultKind,
        FaultPlan,
        JudgeRule,
        LocalAnthropicServer,
        RateLimits,
        Reply,
        RequestRecord,
        Responder,
        SimulatedJudge,
        count_input_tokens,
        estimate_tokens,
    )

__all__ = [
    "FAULT_KINDS",
    "PINNED_MODEL_IDS",
    "FaultKind",
    "FaultPlan",
    "JudgeRule",
    "LocalAnthropicServer",
    "RateLimits",
    "Reply",
    "RequestRecord",
    "Responder",
    "SimulatedJudge",
    "count_input_tokens",
    "estimate_tokens",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("evalkit.testing.server"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
