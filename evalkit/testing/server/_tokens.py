"""What a request says: the text of its messages, its output schema, and its input-token estimate."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "canonical",
    "content_text",
    "count_input_tokens",
    "estimate_tokens",
    "last_user_text",
    "output_schema",
]

_BASE_INPUT_TOKENS = 8
_TOKENS_PER_MESSAGE = 3


def canonical(value: Any) -> str:
    """Compact JSON with sorted keys."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_text(content: Any) -> str:
    """The text of a message's content, for estimates and rule matching."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                kind = block.get("type")
                if kind == "text":
                    parts.append(str(block.get("text", "")))
                elif kind == "tool_result":
                    parts.append(content_text(block.get("content")))
                elif kind == "tool_use":
                    parts.append(str(block.get("name", "")) + canonical(block.get("input", {})))
                elif kind in ("thinking", "redacted_thinking"):
                    parts.append(str(block.get("thinking", "")))
                else:
                    parts.append(canonical(block))
        return "\n".join(parts)
    return canonical(content)


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the last user message of a Messages request ("" when there is none)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def estimate_tokens(text: str) -> int:
    """About one token per four characters (rounded up)."""
    return (len(text) + 3) // 4


def output_schema(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks the reply to follow, or None.

    Reads ``output_config.format`` (what ``messages.parse(output_format=...)`` sends) and the older
    top-level ``output_format``.
    """
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else None
    if fmt is None:
        fmt = body.get("output_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = fmt.get("schema")
        return schema if isinstance(schema, dict) else {}
    return None


def count_input_tokens(body: Mapping[str, Any]) -> int:
    """The deterministic input-token estimate that both ``/v1/messages`` and ``count_tokens`` report.

    About one token per four characters of the system prompt, the messages' text, the tools' JSON and
    the output format's JSON, plus a few tokens per message and a small constant. Fields that
    ``count_tokens`` does not take (``max_tokens``, ``temperature``, ...) do not count.
    """
    parts: list[str] = []
    system = body.get("system")
    if system is not None:
        parts.append(content_text(system))
    messages = body.get("messages")
    n_messages = 0
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict):
                n_messages += 1
                parts.append(content_text(message.get("content")))
    tools = body.get("tools")
    if tools:
        parts.append(canonical(tools))
    schema = output_schema(body)
    if schema is not None:
        parts.append(canonical(schema))
    return estimate_tokens("\n".join(parts)) + _TOKENS_PER_MESSAGE * n_messages + _BASE_INPUT_TOKENS
