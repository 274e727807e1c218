"""A tool-using system's output as a reader takes it in: the reply, then each call with its result."""

from __future__ import annotations

import json
from typing import Any


def _short(value: Any, limit: int = 240) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_transcript(value: Any) -> bool:
    """Whether an output records tool calls or scripted replies (``{"text", "tool_calls", ...}``)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("tool_calls"), list)
        and isinstance(value.get("text", ""), str)
        and all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in value["tool_calls"])
    )


def show_transcript(value: dict[str, Any]) -> str:
    """The reply (each reply, with scripted turns), then ``1. tool(arg=value, ...)`` and ``-> result`` per call.

    >>> print(show_transcript({"text": "Done.", "tool_calls": [{"name": "lookup", "arguments": {"id": "A-1"},
    ...                                                          "result": {"status": "shipped"}}]}))
    reply: Done.
    calls:
      1. lookup(id="A-1")
         -> {"status": "shipped"}
    """
    lines = []
    replies = value.get("replies")
    if isinstance(replies, list) and len(replies) > 1:
        lines += [f"reply {i}: {r}" for i, r in enumerate(replies, 1)]
    else:
        lines.append(f"reply: {value.get('text', '')}")
    if value.get("stopped"):
        lines.append(f"(stopped: {value['stopped']})")
    calls = value["tool_calls"]
    lines.append("calls:" if calls else "calls: none")
    for i, call in enumerate(calls, 1):
        arguments = call.get("arguments", call.get("input", {}))
        if isinstance(arguments, dict):
            shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
        else:
            shown = _short(arguments)
        lines.append(f"  {i}. {call['name']}({_short(shown)})")
        if "result" in call:
            lines.append(f"     -> {_short(call['result'])}")
    return "\n".join(lines)
