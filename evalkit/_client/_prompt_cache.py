"""Prompt caching: a ``cache_control`` marker at the end of a request's stable prefix (its tools and system prompt).

The API then bills the prefix at 1.25x the input price the first time (2x for a 1-hour entry) and 0.1x on every
later call that starts with it, so a suite whose long system prompt comes before short cases pays about a tenth
for it. A marker on a prefix shorter than the model's minimum cacheable length is ignored by the API and costs
nothing, so the prefix is estimated generously (three characters a token) and marked when it may reach the
minimum. The response cache keys requests without their markers (``evalkit._cache``): caching changes the price,
never the answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Literal

__all__ = [
    "MIN_CACHEABLE_TOKENS",
    "PrefixPrimer",
    "PromptCacheTTL",
    "mark_prompt_cache",
    "min_cacheable_tokens",
]

PromptCacheTTL = Literal["5m", "1h"]

MIN_CACHEABLE_TOKENS: dict[str, int] = {
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
"""The documented minimum cacheable prompt length per model family, in tokens (a dated id takes its family's)."""

_DEFAULT_MIN = 1024
# generous on purpose: a marker on too short a prefix costs nothing, a missing one costs the full price
_CHARS_PER_TOKEN = 3


def min_cacheable_tokens(model: str) -> int:
    """The minimum cacheable prefix of `model`: its family's (the longest matching name), else 1,024."""
    family = max((name for name in MIN_CACHEABLE_TOKENS if model.startswith(name)), key=len, default=None)
    return MIN_CACHEABLE_TOKENS[family] if family is not None else _DEFAULT_MIN


def _has_marker(request: Mapping[str, Any]) -> bool:
    blocks: list[Any] = list(request.get("tools") or [])
    system = request.get("system")
    if isinstance(system, list):
        blocks += system
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            blocks += content
    return any(isinstance(b, Mapping) and b.get("cache_control") is not None for b in blocks)


def _system_chars(system: Any) -> int:
    if isinstance(system, str):
        return len(system)
    if isinstance(system, list):
        return sum(len(str(b.get("text", ""))) for b in system if isinstance(b, Mapping))
    return 0


def mark_prompt_cache(request: Mapping[str, Any], ttl: PromptCacheTTL = "5m") -> Mapping[str, Any]:
    """`request` with a ``cache_control`` marker on its last system block (or its last tool, without a system
    prompt) when that prefix may reach the model's minimum cacheable length; unchanged otherwise, and when it
    carries markers of its own.

    >>> long = {"model": "claude-sonnet-4-6", "max_tokens": 8, "system": "x" * 4000,
    ...         "messages": [{"role": "user", "content": "hi"}]}
    >>> mark_prompt_cache(long)["system"][0]["cache_control"]
    {'type': 'ephemeral'}
    >>> mark_prompt_cache({**long, "system": "short"})["system"]
    'short'
    """
    if _has_marker(request):
        return request
    tools = request.get("tools") or []
    tools_chars = len(json.dumps(tools, ensure_ascii=False)) if tools else 0
    system = request.get("system")
    prefix_tokens = (tools_chars + _system_chars(system)) / _CHARS_PER_TOKEN
    if prefix_tokens < min_cacheable_tokens(str(request.get("model", ""))):
        return request
    control: dict[str, str] = {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}
    marked = dict(request)
    if isinstance(system, str) and system:
        marked["system"] = [{"type": "text", "text": system, "cache_control": control}]
    elif isinstance(system, list) and system and isinstance(system[-1], Mapping):
        marked["system"] = [*system[:-1], {**system[-1], "cache_control": control}]
    elif tools and isinstance(tools[-1], Mapping):
        marked["tools"] = [*tools[:-1], {**tools[-1], "cache_control": control}]
    else:
        return request
    return marked


def _marked_prefix(request: Mapping[str, Any]) -> str | None:
    """A digest of the marked prefix a request carries (model, tools, system), None without a marker."""
    if not _has_marker(request):
        return None
    prefix = [request.get("model"), request.get("tools"), request.get("system")]
    return hashlib.sha256(
        json.dumps(prefix, sort_keys=True, default=str).encode("utf-8", "surrogatepass")
    ).hexdigest()


class PrefixPrimer:
    """Sends the first request of each marked prefix alone: the calls with that prefix that come while it is in
    flight wait for its answer, then read the entry it wrote instead of each writing it again (the API makes an
    entry readable once its first response begins). Costs one call's latency per prefix, once per client."""

    def __init__(self, max_wait_s: float) -> None:
        self._max_wait_s = max_wait_s
        self._lock = threading.Lock()
        self._primed: dict[str, threading.Event] = {}

    @contextlib.contextmanager
    def first(self, request: Mapping[str, Any]) -> Iterator[None]:
        digest = _marked_prefix(request)
        if digest is None:
            yield
            return
        with self._lock:
            event = self._primed.get(digest)
            leads = event is None
            if event is None:
                event = self._primed[digest] = threading.Event()
        if not leads:
            event.wait(self._max_wait_s)
            yield
            return
        try:
            yield
        finally:
            event.set()  # answered or failed: the others go either way
