"""The one place evalkit talks to the Anthropic API: calls, structured output, batches, prices.

A call that fails raises ``evalkit.errors.CallError``. The SDK is imported only when a name that needs it is
first used, so prices stay cheap to import."""

from typing import TYPE_CHECKING

from evalkit._client._preload import preload, wait_for_preload
from evalkit._client._pricing import (
    DEFAULT_PRICES,
    PINNED_IDS,
    cost_usd,
    current_prices,
    is_simulated,
)
from evalkit._client._redact import redact_url

if TYPE_CHECKING:
    from evalkit._client._client import Client
    from evalkit._client._model_ids import sdk_model_ids
    from evalkit._client._result import BatchStatus, CallResult, is_structured
    from evalkit._client._sdk import warm_up
    from evalkit._client._structured import json_schema_format, output_format_for, structured_request

_LAZY = {
    "BatchStatus": "evalkit._client._result",
    "CallResult": "evalkit._client._result",
    "is_structured": "evalkit._client._result",
    "Client": "evalkit._client._client",
    "json_schema_format": "evalkit._client._structured",
    "output_format_for": "evalkit._client._structured",
    "structured_request": "evalkit._client._structured",
    "sdk_model_ids": "evalkit._client._model_ids",
    "warm_up": "evalkit._client._sdk",
}


def __getattr__(name: str) -> object:
    from evalkit._lazy import load

    return load(__name__, _LAZY, name)


__all__ = [
    "DEFAULT_PRICES",
    "PINNED_IDS",
    "BatchStatus",
    "CallResult",
    "Client",
    "cost_usd",
    "current_prices",
    "is_simulated",
    "is_structured",
    "json_schema_format",
    "output_format_for",
    "preload",
    "redact_url",
    "sdk_model_ids",
    "structured_request",
    "wait_for_preload",
    "warm_up",
]
