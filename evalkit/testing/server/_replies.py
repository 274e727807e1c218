"""Where a reply's text comes from: rules, a responder, or the fixed text (a schema example for structured output)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.testing.server._api_errors import _RequestError
from evalkit.testing.server._schema_example import example_from_schema
from evalkit.testing.server._tokens import count_input_tokens, estimate_tokens, last_user_text, output_schema

__all__ = [
    "DEFAULT_TEXT",
    "PINNED_MODEL_IDS",
    "Reply",
    "ResolvedReply",
    "Responder",
    "Rule",
    "compile_rules",
    "resolve_reply",
]

PINNED_MODEL_IDS: dict[str, str] = {
    "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5": "claude-haiku-4-5-20251001",
    "claude-opus-4-5": "claude-opus-4-5-20251101",
}
"""Undated aliases and the dated ids the API resolves them to; pass as ``models=`` to resolve like the API."""

DEFAULT_TEXT = "This is a reply from the local Anthropic-compatible server."


@dataclass(frozen=True)
class Reply:
    """A reply from a responder or a rule, when a bare string or JSON value is not enough.

    ``text`` is sent as is; ``data`` (any JSON value) is sent as its JSON text. ``usage`` entries
    (``input_tokens``, ``output_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``)
    override the server's estimates; ``model`` overrides the resolved model id. ``tool_calls`` (each
    ``{"name": ..., "input": {...}}``) are sent as tool_use blocks after any text, with stop_reason
    ``tool_use``: a tool-using system's loop can be developed offline.
    """

    text: str | None = None
    data: Any = None
    stop_reason: str = "end_turn"
    model: str | None = None
    usage: Mapping[str, int] | None = None
    tool_calls: Sequence[Mapping[str, Any]] | None = None

    def render(self) -> str:
        if self.text is not None:
            return self.text
        if self.data is not None:
            return json.dumps(self.data, ensure_ascii=False)
        return ""


Responder = Callable[[dict[str, Any]], "str | dict[str, Any] | list[Any] | Reply | None"]
"""``(request_body) -> reply``: a string is the reply text, a dict or list is sent as JSON text; None leaves the
request to the default reply."""

Rule = tuple[re.Pattern[str], "str | dict[str, Any] | list[Any] | Reply"]
"""A compiled ``(regex, reply)`` pair, tried with ``re.search`` on the last user message."""


def compile_rules(rules: Sequence[tuple[str | re.Pattern[str], Any]]) -> list[Rule]:
    """``(regex, reply)`` pairs with their patterns compiled."""
    return [(re.compile(pattern) if isinstance(pattern, str) else pattern, reply) for pattern, reply in rules]


@dataclass
class ResolvedReply:
    text: str
    stop_reason: str
    model: str
    usage: dict[str, Any]
    tool_calls: list[dict[str, Any]] | None = None


def resolve_reply(
    body: dict[str, Any],
    *,
    rules: Sequence[Rule],
    responder: Responder | None,
    text: str,
    models: Mapping[str, str],
    errors: list[BaseException],
    judge: Callable[[dict[str, Any]], Reply | None] | None = None,
    model_prefix: str = "",
    input_usage: Mapping[str, Any] | None = None,
) -> ResolvedReply:
    """The reply to a (valid) messages request: the judge's verdict for a judge request, else the first matching
    rule, else the responder, else ``text`` (a schema example for a structured-output request).

    A responder's exception is kept in ``errors`` and answered 500. ``model_prefix`` goes before the model id
    of a reply that does not name its own. ``input_usage`` (the prompt cache's split of the input tokens)
    replaces the plain input count; a reply's own ``usage`` still wins.
    """
    # what the body asks for is read before the responder, which may change the body it is given
    input_tokens = count_input_tokens(body)
    requested = str(body.get("model"))
    schema = output_schema(body)
    reply: str | dict[str, Any] | list[Any] | Reply | None = None
    if judge is not None and schema is not None:
        reply = judge(body)
    if reply is None and rules:
        user_text = last_user_text(body)
        for pattern, rule_reply in rules:
            if pattern.search(user_text):
                reply = rule_reply
                break
    if reply is None and responder is not None:
        try:
            reply = responder(body)
        except Exception as exc:
            errors.append(exc)
            raise _RequestError(500, f"responder raised {type(exc).__name__}: {exc}") from exc
    if reply is None:
        reply = text if schema is None else Reply(data=example_from_schema(schema))

    model = model_prefix + models.get(requested, requested)
    stop_reason = "end_turn"
    overrides: Mapping[str, int] = {}
    tool_calls: list[dict[str, Any]] | None = None
    if isinstance(reply, Reply):
        reply_text = reply.render()
        stop_reason = reply.stop_reason
        if reply.tool_calls:
            tool_calls = [
                {"name": str(c["name"]), "input": dict(c.get("input") or {})} for c in reply.tool_calls
            ]
            stop_reason = "tool_use" if stop_reason == "end_turn" else stop_reason
        model = reply.model or model
        overrides = reply.usage or {}
    elif isinstance(reply, str):
        reply_text = reply
    else:
        reply_text = json.dumps(reply, ensure_ascii=False)
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "output_tokens": max(1, estimate_tokens(reply_text + (json.dumps(tool_calls) if tool_calls else ""))),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    usage.update(input_usage or {})
    usage.update(overrides)
    return ResolvedReply(
        text=reply_text, stop_reason=stop_reason, model=model, usage=usage, tool_calls=tool_calls
    )
