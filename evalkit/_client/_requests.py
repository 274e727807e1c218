"""Request plumbing: checking a request dict and splitting it into the SDK method's arguments."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Mapping
from typing import Any

import anthropic

_BAD_RESPONSE_BACKOFF_S = 0.25
_BAD_RESPONSE_BACKOFF_MAX_S = 4.0

# Method parameters that are not request keys: call options, and `output_format`, which takes a pydantic
# type (``parse`` is given one separately; a request carries its format in ``output_config``).
_NOT_REQUEST_KEYS = frozenset(
    {"self", "extra_headers", "extra_query", "extra_body", "timeout", "output_format"}
)


@functools.cache
def _keyword_params(method_name: str) -> frozenset[str]:
    method = getattr(anthropic.resources.messages.Messages, method_name)
    params = inspect.signature(method).parameters
    return frozenset(name for name in params if name not in _NOT_REQUEST_KEYS)


def _split_request(request: Mapping[str, Any], method_name: str) -> dict[str, Any]:
    """SDK keyword arguments for ``request``; keys the method does not take go in ``extra_body``."""
    accepted = _keyword_params(method_name)
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in request.items():
        (kwargs if key in accepted else extra)[key] = value
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def _check_request(request: Mapping[str, Any], *, need_max_tokens: bool = True) -> None:
    if not isinstance(request, Mapping):
        raise TypeError(f"a request is a dict of messages.create arguments, got {type(request).__name__}")
    required = ("model", "messages", "max_tokens") if need_max_tokens else ("model", "messages")
    missing = [key for key in required if key not in request]
    if missing:
        raise ValueError(f"request is missing {', '.join(missing)}")
    if request.get("stream"):
        raise ValueError("streaming requests are not supported; drop 'stream' from the request")


def _is_decode_error(exc: BaseException) -> bool:
    """A reply body that is not valid JSON (e.g. cut short): worth another try."""
    return isinstance(exc, json.JSONDecodeError)


def _backoff(attempt: int) -> float:
    return float(min(_BAD_RESPONSE_BACKOFF_S * 2 ** (attempt - 1), _BAD_RESPONSE_BACKOFF_MAX_S))
