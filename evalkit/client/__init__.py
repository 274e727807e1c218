"""The one place evalkit talks to the Anthropic API: calls, errors, structured output, batches, prices.

The SDK is imported only when a name that needs it is first used, so prices and error kinds stay cheap to import."""

from typing import TYPE_CHECKING

from evalkit.client._pricing import (
    DEFAULT_PRICES,
    PINNED_IDS,
    cost_usd,
    current_prices,
)

if TYPE_CHECKING:
    from evalkit.client._client import (
        BatchStatus,
        CallError,
        CallResult,
        Client,
        is_structured,
        json_schema_format,
        output_format_for,
        structured_request,
        warm_up,
    )

_LAZY = {
    "BatchStatus": "evalkit.client._client",
    "CallError": "evalkit.client._client",
    "CallResult": "evalkit.client._client",
    "Client": "evalkit.client._client",
    "is_structured": "evalkit.client._client",
    "json_schema_format": "evalkit.client._client",
    "output_format_for": "evalkit.client._client",
    "structured_request": "evalkit.client._client",
    "warm_up": "evalkit.client._client",
}


def __getattr__(name: str) -> object:
    from evalkit._lazy import load

    return load(__name__, _LAZY, name)


__all__ = [
    "DEFAULT_PRICES",
    "PINNED_IDS",
    "BatchStatus",
    "CallError",
    "CallResult",
    "Client",
    "cost_usd",
    "current_prices",
    "is_structured",
    "json_schema_format",
    "output_format_for",
    "structured_request",
    "warm_up",
]
