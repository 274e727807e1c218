"""The one place evalkit talks to the Anthropic API: calls, errors, structured output, batches, prices.

The SDK is imported only when a name that needs it is first used, so prices, error kinds and ``CallError`` stay
cheap to import."""

from typing import TYPE_CHECKING

from evalkit.client._errors import RETRYABLE_KINDS, CallError, ErrorKind
from evalkit.client._preload import preload, wait_for_preload
from evalkit.client._pricing import (
    DEFAULT_PRICES,
    PINNED_IDS,
    cost_usd,
    current_prices,
    is_simulated,
)
from evalkit.client._redact import redact_url

if TYPE_CHECKING:
    from evalkit.client._client import Client
    from evalkit.client._model_ids import sdk_model_ids
    from evalkit.client._result import BatchStatus, CallResult, is_structured
    from evalkit.client._sdk import warm_up
    from evalkit.client._structured import json_schema_format, output_format_for, structured_request

_LAZY = {
    "BatchStatus": "evalkit.client._result",
    "CallResult": "evalkit.client._result",
    "is_structured": "evalkit.client._result",
    "Client": "evalkit.client._client",
    "json_schema_format": "evalkit.client._structured",
    "output_format_for": "evalkit.client._structured",
    "structured_request": "evalkit.client._structured",
    "sdk_model_ids": "evalkit.client._model_ids",
    "warm_up": "evalkit.client._sdk",
}


def __getattr__(name: str) -> object:
    from evalkit._lazy import load

    return load(__name__, _LAZY, name)


__all__ = [
    "DEFAULT_PRICES",
    "PINNED_IDS",
    "RETRYABLE_KINDS",
    "BatchStatus",
    "CallError",
    "CallResult",
    "Client",
    "ErrorKind",
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
