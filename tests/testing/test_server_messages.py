"""The local Anthropic-compatible server, through the official SDK: messages, structured output and count_tokens."""

from __future__ import annotations

import json
from typing import Any

from server_helpers import (
    MODEL,
    MakeServer,
    Order,
    Verdict,
    ask,
    first_text,
    sdk,
)

from evalkit.testing import PINNED_MODEL_IDS, LocalAnthropicServer, Reply
from evalkit.testing.server import count_input_tokens, example_from_schema, last_user_text

# ---- messages ------------------------------------------------------------------------------------------------


def test_text_reply_has_the_messages_api_shape(anthropic_server: LocalAnthropicServer) -> None:
    raw = sdk(anthropic_server).messages.with_raw_response.create(**ask("Hello"))
    message = raw.parse()
    data = raw.http_response.json()

    assert raw.headers["request-id"].startswith("req_")
    assert message._request_id == raw.headers["request-id"]
    assert data["type"] == "message" and data["role"] == "assistant"
    assert data["id"].startswith("msg_")
    assert data["model"] == MODEL  # echoed by default
    assert data["content"] == [{"type": "text", "text": anthropic_server.text}]
    assert data["stop_reason"] == "end_turn"
    assert set(data["usage"]) >= {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }
    assert message.usage.output_tokens == (len(anthropic_server.text) + 3) // 4


def test_reply_names_the_configured_resolved_model(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(models=PINNED_MODEL_IDS)
    client = sdk(server)
    assert client.messages.create(**ask("hi")).model == "claude-haiku-4-5-20251001"
    other = ask("hi", model="my-custom-model")
    assert client.messages.create(**other).model == "my-custom-model"


def test_rules_match_the_last_user_message_then_the_responder(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(
        lambda body: f"echo: {last_user_text(body)}",
        rules=[
            (r"(?i)refund", "billing"),
            (r"password", Reply(text="account", stop_reason="stop_sequence")),
        ],
    )
    client = sdk(server)

    assert first_text(client.messages.create(**ask("I want a REFUND"))) == "billing"
    reply = client.messages.create(**ask("forgot my password"))
    assert first_text(reply) == "account"
    assert reply.stop_reason == "stop_sequence"
    multi_turn: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 50,
        "messages": [
            {"role": "user", "content": "refund please"},
            {"role": "assistant", "content": "Sure."},
            {"role": "user", "content": [{"type": "text", "text": "where is my parcel"}]},
        ],
    }
    assert first_text(client.messages.create(**multi_turn)) == "echo: where is my parcel"


def test_reply_can_set_usage_model_and_json(make_anthropic_server: MakeServer) -> None:
    replies: list[Any] = [
        Reply(text="cached", usage={"cache_read_input_tokens": 700, "output_tokens": 3}, model="pinned-x"),
        {"answer": 42},
        Reply(data=["a", "b"], stop_reason="max_tokens"),
    ]
    server = make_anthropic_server(lambda body: replies.pop(0))
    client = sdk(server)

    first = client.messages.create(**ask("one"))
    assert first.model == "pinned-x"
    assert first.usage.cache_read_input_tokens == 700
    assert first.usage.output_tokens == 3
    assert json.loads(first_text(client.messages.create(**ask("two")))) == {"answer": 42}
    third = client.messages.create(**ask("three"))
    assert json.loads(first_text(third)) == ["a", "b"]
    assert third.stop_reason == "max_tokens"


def test_structured_output_through_messages_parse(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(
        lambda body: {"label": "billing", "confidence": 0.9, "reasons": ["mentions a refund"]}
    )
    parsed = sdk(server).messages.parse(**ask("refund?"), output_format=Verdict)

    assert parsed.parsed_output == Verdict(label="billing", confidence=0.9, reasons=["mentions a refund"])
    (record,) = server.requests
    fmt = record.body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"]["type"] == "object"
    assert fmt["schema"]["additionalProperties"] is False
    assert fmt["schema"]["properties"]["label"]["enum"] == ["billing", "account", "shipping"]
    assert "output_format" not in record.body
    assert record.headers["x-stainless-helper"] == "messages.parse"
    assert not any(name == "anthropic-beta" for name in record.header_names)


def test_default_structured_reply_follows_the_schema(anthropic_server: LocalAnthropicServer) -> None:
    client = sdk(anthropic_server)
    order = client.messages.parse(**ask("make an order"), output_format=Order).parsed_output
    assert isinstance(order, Order)
    assert order.ship_to.city
    verdict = client.messages.parse(**ask("classify"), output_format=Verdict).parsed_output
    assert isinstance(verdict, Verdict) and verdict.label == "billing"


def test_example_from_schema_handles_refs_unions_and_formats() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date"},
            "kind": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Kind"}]},
            "items": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
            "ratio": {"type": "number"},
            "flag": {"const": True},
        },
        "$defs": {"Kind": {"enum": ["a", "b"]}},
    }
    assert example_from_schema(schema) == {
        "when": "2026-01-01",
        "kind": "a",
        "items": [1],
        "ratio": 1.0,
        "flag": True,
    }


def test_count_tokens_equals_the_usage_of_the_same_request(anthropic_server: LocalAnthropicServer) -> None:
    client = sdk(anthropic_server)
    request: dict[str, Any] = {
        "model": MODEL,
        "system": [{"type": "text", "text": "You sort support tickets into queues."}],
        "messages": [
            {"role": "user", "content": "My card was charged twice for order A-10442."},
            {"role": "assistant", "content": "Let me look."},
            {"role": "user", "content": [{"type": "text", "text": "Any news?"}]},
        ],
        "tools": [
            {
                "name": "lookup_order",
                "description": "Find an order",
                "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}},
            }
        ],
    }
    counted = client.messages.count_tokens(**request, output_format=Verdict).input_tokens
    reply = client.messages.parse(**request, max_tokens=300, output_format=Verdict)
    assert reply.usage.input_tokens == counted
    assert counted == count_input_tokens(anthropic_server.requests[0].body)
    plain = client.messages.count_tokens(**request).input_tokens
    assert 0 < plain < counted  # the schema counts
    assert client.messages.create(**request, max_tokens=10).usage.input_tokens == plain


def test_example_from_schema_honours_item_counts_lengths_and_bounds() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "minLength": 9}, "minItems": 2},
            "code": {"type": "string", "maxLength": 3},
            "score": {"type": "integer", "minimum": 3, "maximum": 5},
            "ratio": {"type": "number", "exclusiveMinimum": 2},
            "cap": {"type": "integer", "maximum": 0},
        },
    }
    value = example_from_schema(schema)

    assert len(value["tags"]) == 2 and all(len(t) >= 9 for t in value["tags"])
    assert len(value["code"]) <= 3
    assert value["score"] == 3 and isinstance(value["score"], int)
    assert value["ratio"] > 2
    assert value["cap"] <= 0
