"""Test helpers: a local Anthropic-compatible server and pytest fixtures for it.

``from evalkit.testing import LocalAnthropicServer`` works as usual; the names are loaded on first use so
that ``python -m evalkit.testing.server`` runs without importing the module twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import attach

if TYPE_CHECKING:
    from evalkit.testing._simulated import simulated_api
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

__getattr__, __dir__, __all__ = attach(__name__, __file__)
