"""The Messages endpoint's request checks and reply shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.testing.server._api_errors import _RequestError
from evalkit.testing.server._replies import ResolvedReply

__all__ = ["message_json", "require_dict", "validate_messages"]


def require_dict(body: Any) -> dict[str, Any]:
    """The body, if it is a JSON object; a 400 otherwise."""
    if not isinstance(body, dict):
        raise _RequestError(400, "request body must be a JSON object")
    return body


def validate_messages(body: Mapping[str, Any], *, count_only: bool = False) -> None:
    """400 for what the API would refuse in a messages (or, with ``count_only``, a count_tokens) request."""
    if not isinstance(body.get("model"), str) or not body.get("model"):
        raise _RequestError(400, "model: field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _RequestError(400, "messages: at least one message is required")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise _RequestError(400, f"messages.{i}.role: must be 'user' or 'assistant'")
        if "content" not in message:
            raise _RequestError(400, f"messages.{i}.content: field required")
    if count_only:
        return
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise _RequestError(400, "max_tokens: must be a positive integer")
    if body.get("stream"):
        raise _RequestError(400, "stream: streaming is not supported by the local server")


def _content(reply: ResolvedReply, message_id: str) -> list[dict[str, Any]]:
    """A text block (unless a tool call comes with no text), then a tool_use block per call."""
    blocks: list[dict[str, Any]] = []
    if reply.text or not reply.tool_calls:
        blocks.append({"type": "text", "text": reply.text})
    for i, call in enumerate(reply.tool_calls or []):
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{message_id[-16:]}{i:02d}",
                "name": call["name"],
                "input": call["input"],
            }
        )
    return blocks


def message_json(reply: ResolvedReply, message_id: str, *, batch: bool = False) -> dict[str, Any]:
    """The Messages API's reply object for a resolved reply."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": _content(reply, message_id),
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": {**reply.usage, "service_tier": "batch" if batch else "standard"},
    }
