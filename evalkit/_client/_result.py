"""What a successful call returns, and where a Message Batch is."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pydantic

from evalkit._client import _pricing as pricing
from evalkit.errors import CallError


def is_structured(request: Mapping[str, Any]) -> bool:
    """Whether a request asks for structured (JSON schema) output."""
    config = request.get("output_config")
    fmt = config.get("format") if isinstance(config, Mapping) else None
    if fmt is None:
        fmt = request.get("output_format")
    return isinstance(fmt, Mapping) and fmt.get("type") == "json_schema"


def _text_of(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


with warnings.catch_warnings():
    # `json` is the field's name by design; it shadows pydantic's deprecated `BaseModel.json()`.
    warnings.filterwarnings("ignore", message='Field name "json"', category=UserWarning)

    class CallResult(pydantic.BaseModel):
        """One successful call.

        ``json`` is the reply text parsed as JSON when the request asked for structured output (None if
        it did not, or if the text is not JSON). ``model`` is the id the API answered with (e.g. the dated
        id for an alias); ``requested_model`` the one asked for. ``latency_s`` is the wall time of the call,
        retries included (for a batch item: the batch's time from creation to end). ``cost_usd`` is None
        when the model's price is unknown. ``message`` is the raw message JSON, from which
        ``from_message`` rebuilds the result.
        """

        text: str
        json: Any = None
        model: str
        requested_model: str
        request_id: str | None = None
        stop_reason: str | None = None
        input_tokens: int = 0
        output_tokens: int = 0
        cache_creation_input_tokens: int = 0
        cache_read_input_tokens: int = 0
        latency_s: float = 0.0
        cost_usd: float | None = None
        batch: bool = False
        message: dict[str, Any] = pydantic.Field(default_factory=dict)

        @classmethod
        def from_cache_entry(cls, entry: Any, *, requested_model: str, structured: bool) -> CallResult:
            """Rebuild a result from a response-cache entry (its raw message and the meta written with it)."""
            return cls.from_message(
                entry.response,
                requested_model=requested_model,
                latency_s=float(entry.meta.get("latency_s") or 0.0),
                batch=bool(entry.meta.get("batch")),
                structured=structured,
            )

        def cache_meta(self, **extra: Any) -> dict[str, Any]:
            """What a response-cache entry records beside the raw message."""
            return {
                "model": self.model,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cost_usd": self.cost_usd,
                "latency_s": self.latency_s,
                "batch": self.batch,
                **extra,
            }

        @classmethod
        def from_message(
            cls,
            message: Mapping[str, Any],
            *,
            requested_model: str,
            latency_s: float = 0.0,
            batch: bool = False,
            prices: Mapping[str, pricing.ModelPrice] | None = None,
            structured: bool = False,
            request_id: str | None = None,
        ) -> CallResult:
            """Rebuild a result from a raw message JSON dict (as kept in ``CallResult.message``).

            ``structured``: whether the request asked for structured output, so ``json`` is filled.
            Raises ``CallError("bad_response")`` if the dict is not a message.
            """
            if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
                raise CallError(
                    "bad_response", None, "the reply is not a message (no content list)", request_id
                )
            usage = message.get("usage")
            usage = usage if isinstance(usage, Mapping) else {}
            text = _text_of(message["content"])
            parsed: Any = None
            if structured and text:
                try:
                    parsed = json.loads(text)
                except ValueError:
                    parsed = None
            model = str(message.get("model") or requested_model)
            cost = pricing.cost_usd(model, usage, batch, prices=prices)
            if cost is None and model != requested_model:
                cost = pricing.cost_usd(requested_model, usage, batch, prices=prices)
            stop_reason = message.get("stop_reason")
            return cls(
                text=text,
                json=parsed,
                model=model,
                requested_model=requested_model,
                request_id=request_id,
                stop_reason=str(stop_reason) if stop_reason is not None else None,
                input_tokens=_int(usage.get("input_tokens")),
                output_tokens=_int(usage.get("output_tokens")),
                cache_creation_input_tokens=_int(usage.get("cache_creation_input_tokens")),
                cache_read_input_tokens=_int(usage.get("cache_read_input_tokens")),
                latency_s=latency_s,
                cost_usd=cost,
                batch=batch,
                message=dict(message),
            )


class BatchStatus(pydantic.BaseModel):
    """Where a Message Batch is: ``processing_status`` is ``in_progress``, ``canceling`` or ``ended``."""

    id: str
    processing_status: str
    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    canceled: int = 0
    expired: int = 0
    created_at: datetime | None = None
    ended_at: datetime | None = None

    @property
    def ended(self) -> bool:
        return self.processing_status == "ended"

    @property
    def total(self) -> int:
        return self.processing + self.succeeded + self.errored + self.canceled + self.expired
