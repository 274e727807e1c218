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
from evalkit._client._prompt_cache import (
    MIN_CACHEABLE_TOKENS,
    PromptCacheTTL,
    mark_prompt_cache,
    min_cacheable_tokens,
)
from evalkit._client._redact import redact_url
from evalkit._client._spending import SpendingCap, worst_case_usd
from evalkit._lazy import attach

if TYPE_CHECKING:
    from evalkit._client._client import Client
    from evalkit._client._model_ids import sdk_model_ids
    from evalkit._client._result import BatchStatus, CallResult, is_structured
    from evalkit._client._sdk import warm_up
    from evalkit._client._structured import json_schema_format, output_format_for, structured_request

__getattr__, __dir__, __all__ = attach(__name__, __file__)
