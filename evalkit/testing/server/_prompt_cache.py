"""Prompt caching as the Messages API accounts for it: breakpoints, prefixes, minimum lengths, TTLs, usage.

A request marks up to four blocks with ``cache_control``; the prefix through each marked block (tools, then the
system prompt, then the messages, in that order) is a cache entry once it has been written. A request reads the
longest marked prefix that is cached and writes the marked prefixes beyond it; a prefix shorter than the model's
minimum cacheable length is neither read nor written. Usage then splits the input into
``cache_read_input_tokens``, ``cache_creation_input_tokens`` (with its 5-minute / 1-hour split) and
``input_tokens``, the part after the last cached or written breakpoint. An entry lives 5 minutes (or 1 hour with
``"ttl": "1h"``) from its last use, and is written when the response is sent: requests in flight together all
write, as on the API.

Kept simpler than the API: a read only matches a marked prefix exactly (the API also finds an entry a few blocks
before a breakpoint), and tokens are the server's estimate of about four characters a token.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.testing.server._api_errors import _RequestError
from evalkit.testing.server._tokens import (
    canonical,
    content_text,
    count_input_tokens,
    estimate_tokens,
    output_schema,
)

__all__ = ["MAX_BREAKPOINTS", "MIN_CACHEABLE_TOKENS", "PromptCache", "min_cacheable_tokens"]

MAX_BREAKPOINTS = 4

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
"""The documented minimum cacheable prompt length per model family (a dated id takes its family's)."""

_DEFAULT_MIN = 1024
_TTL_S = {"5m": 300.0, "1h": 3600.0}


def min_cacheable_tokens(model: str) -> int:
    """The minimum cacheable prefix of `model`: its family's (the longest matching name), else 1,024."""
    family = max((name for name in MIN_CACHEABLE_TOKENS if model.startswith(name)), key=len, default=None)
    return MIN_CACHEABLE_TOKENS[family] if family is not None else _DEFAULT_MIN


@dataclass(frozen=True)
class _Breakpoint:
    digest: str
    tokens: int
    ttl: str


def _marker(block: Any, where: str) -> str | None:
    """The TTL a block's ``cache_control`` asks for, None without one; a 400 for one the API refuses."""
    if not isinstance(block, dict) or block.get("cache_control") is None:
        return None
    control = block["cache_control"]
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        raise _RequestError(400, f"{where}.cache_control.type: Input should be 'ephemeral'")
    ttl = control.get("ttl", "5m")
    if ttl not in _TTL_S:
        raise _RequestError(400, f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
    return str(ttl)


def _blocks(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The request's blocks in the order the API caches them: tools, system, then each message's content."""
    out: list[tuple[str, Any]] = []
    tools = body.get("tools")
    if isinstance(tools, list):
        out += [(f"tools.{i}", tool) for i, tool in enumerate(tools)]
    system = body.get("system")
    if isinstance(system, list):
        out += [(f"system.{i}", block) for i, block in enumerate(system)]
    elif system is not None:
        out.append(("system", system))
    messages = body.get("messages")
    for m, message in enumerate(messages if isinstance(messages, list) else []):
        content = message.get("content") if isinstance(message, dict) else None
        role = message.get("role") if isinstance(message, dict) else None
        if isinstance(content, list):
            out += [(f"messages.{m}.content.{i}", (role, block)) for i, block in enumerate(content)]
        else:
            out.append((f"messages.{m}.content", (role, content)))
    return out


def _unmarked(block: Any) -> Any:
    if isinstance(block, dict):
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def breakpoints(body: Mapping[str, Any]) -> list[_Breakpoint]:
    """The marked prefixes of a request, shortest first: a 400 beyond four, or for a 1-hour entry after a
    5-minute one (longer TTLs come first)."""
    found: list[_Breakpoint] = []
    running = hashlib.sha256(
        canonical([body.get("model"), output_schema(body)]).encode("utf-8", "surrogatepass")
    )
    text: list[str] = []
    for where, item in _blocks(body):
        block = item[1] if where.startswith("messages") else item
        ttl = _marker(block, where)
        plain = _unmarked(block)
        running.update(canonical([where.split(".")[0], plain]).encode("utf-8", "surrogatepass"))
        text.append(canonical(plain) if where.startswith("tools") else content_text([plain]))
        if ttl is not None:
            if found and ttl == "1h" and found[-1].ttl == "5m":
                raise _RequestError(
                    400,
                    f"{where}.cache_control: a 1h cache entry must come before any 5m one (longer TTLs first)",
                )
            found.append(_Breakpoint(running.copy().hexdigest(), estimate_tokens("\n".join(text)), ttl))
    if len(found) > MAX_BREAKPOINTS:
        raise _RequestError(
            400,
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(found)}.",
        )
    return found


class PromptCache:
    """The server's prompt-cache entries (prefix digest -> when it expires), shared by all its requests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._expires: dict[str, float] = {}
        self._lock = threading.Lock()

    def account(self, body: Mapping[str, Any]) -> tuple[dict[str, Any], Callable[[], None]]:
        """(the usage of `body`'s input, a callable that writes and refreshes its entries once it is answered).

        Checks the markers first: a request the API would refuse raises the same 400."""
        marked = breakpoints(body)
        total = count_input_tokens(body)
        minimum = min_cacheable_tokens(str(body.get("model", "")))
        eligible = [b for b in marked if b.tokens >= minimum]
        now = self._clock()
        with self._lock:
            hit = next(
                (
                    i
                    for i in range(len(eligible) - 1, -1, -1)
                    if self._expires.get(eligible[i].digest, 0.0) > now
                ),
                -1,
            )
        read = eligible[hit].tokens if hit >= 0 else 0
        written = {"5m": 0, "1h": 0}
        before = read
        for b in eligible[hit + 1 :]:
            written[b.ttl] += max(0, b.tokens - before)
            before = max(before, b.tokens)
        read = min(read, total)
        creation = min(written["5m"] + written["1h"], total - read)
        usage = {
            "input_tokens": total - read - creation,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": creation - min(written["1h"], creation),
                "ephemeral_1h_input_tokens": min(written["1h"], creation),
            },
        }

        def commit() -> None:
            later = self._clock()
            with self._lock:
                for b in eligible:
                    self._expires[b.digest] = later + _TTL_S[b.ttl]

        return usage, commit

    def clear(self) -> None:
        with self._lock:
            self._expires.clear()
