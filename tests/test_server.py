"""The local Anthropic-compatible server, exercised through the official SDK."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, cast

import anthropic
import pydantic
import pytest

from evalkit.testing import FAULT_KINDS, PINNED_MODEL_IDS, FaultPlan, LocalAnthropicServer, Reply
from evalkit.testing.server._server import (
    _parse_args,
    count_input_tokens,
    example_from_schema,
    last_user_text,
    main,
)

API_KEY = "sk-ant-test-server-0123456789abcdef"
MODEL = "claude-haiku-4-5"
MakeServer = Callable[..., LocalAnthropicServer]


_open_clients: list[anthropic.Anthropic] = []


def sdk(server: LocalAnthropicServer, **kwargs: Any) -> anthropic.Anthropic:
    kwargs.setdefault("max_retries", 0)
    return track(anthropic.Anthropic(base_url=server.base_url, api_key=API_KEY, **kwargs))


def track(client: anthropic.Anthropic) -> anthropic.Anthropic:
    """Close this SDK client after the test."""
    _open_clients.append(client)
    return client


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _open_clients:
        _open_clients.pop().close()


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 256, "messages": [{"role": "user", "content": text}], **extra}


def first_text(message: Any) -> str:
    block = message.content[0]
    assert block.type == "text"
    return str(block.text)


def raw_request(
    server: LocalAnthropicServer, method: str, path: str, body: bytes | None, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


class Verdict(pydantic.BaseModel):
    label: Literal["billing", "account", "shipping"]
    confidence: float
    reasons: list[str]


class Address(pydantic.BaseModel):
    city: str
    postcode: str | None = None


class Order(pydantic.BaseModel):
    order_id: str
    quantity: int
    gift: bool
    ship_to: Address
    tags: list[str]


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


# ---- auth ----------------------------------------------------------------------------------------------------


def test_auth_by_bearer_or_x_api_key_and_401_without(anthropic_server: LocalAnthropicServer) -> None:
    sdk(anthropic_server).messages.create(**ask("bearer"))
    x_api_key = track(
        anthropic.Anthropic(
            base_url=anthropic_server.base_url,
            api_key="unused",
            default_headers=cast(Any, {"Authorization": anthropic.omit, "x-api-key": API_KEY}),
            max_retries=0,
        )
    )
    x_api_key.messages.create(**ask("x-api-key"))
    no_auth = track(
        anthropic.Anthropic(
            base_url=anthropic_server.base_url,
            api_key="unused",
            default_headers=cast(Any, {"Authorization": anthropic.omit}),
            max_retries=0,
        )
    )
    with pytest.raises(anthropic.AuthenticationError) as caught:
        no_auth.messages.create(**ask("nobody"))

    assert caught.value.status_code == 401
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["type"] == "error"
    assert caught.value.body["error"]["type"] == "authentication_error"
    assert [(r.auth, r.auth_present, r.status) for r in anthropic_server.requests] == [
        ("bearer", True, 200),
        ("x-api-key", True, 200),
        (None, False, 401),
    ]


def test_expected_key_rejects_other_keys(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(api_key=API_KEY)
    sdk(server).messages.create(**ask("right key"))
    wrong = track(
        anthropic.Anthropic(base_url=server.base_url, api_key="sk-ant-wrong-key-000000", max_retries=0)
    )
    with pytest.raises(anthropic.AuthenticationError):
        wrong.messages.create(**ask("wrong key"))


def test_request_log_keeps_header_names_but_no_key(anthropic_server: LocalAnthropicServer) -> None:
    client = sdk(anthropic_server)
    client.messages.create(**ask("log me"))
    client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "count me"}])

    first, second = anthropic_server.requests
    assert (first.method, first.path, first.status, first.fault) == ("POST", "/v1/messages", 200, None)
    assert first.body == ask("log me")
    assert "authorization" in first.header_names
    assert "authorization" not in first.headers
    assert first.headers["anthropic-version"]
    assert first.duration_s is not None and first.duration_s >= 0
    assert second.path == "/v1/messages/count_tokens" and second.started_at >= first.started_at
    assert [r.index for r in anthropic_server.requests] == [0, 1]
    assert anthropic_server.requests_to("/v1/messages") == [first]
    assert API_KEY not in repr(anthropic_server.requests)
    assert "Bearer" not in repr(anthropic_server.requests)


def test_request_log_and_usage_keep_what_was_received(make_anthropic_server: MakeServer) -> None:
    def meddling(body: dict[str, Any]) -> str:
        body["messages"].append({"role": "assistant", "content": "x" * 400})
        body.pop("max_tokens")
        body["model"] = "another-model"
        return "ok"

    server = make_anthropic_server(meddling)
    client = sdk(server)
    sent = ask("what was sent")
    reply = client.messages.create(**sent)
    counted = client.messages.count_tokens(model=MODEL, messages=sent["messages"]).input_tokens

    assert reply.model == MODEL
    assert reply.usage.input_tokens == counted == count_input_tokens(sent)
    first = server.requests[0]
    assert first.body == sent  # not what the responder made of it
    first.body["messages"].clear()
    first.body["max_tokens"] = 1
    assert server.requests[0].body == sent  # a reader's snapshot is its own copy


# ---- errors and faults ---------------------------------------------------------------------------------------


def test_api_errors_use_the_error_shape(make_anthropic_server: MakeServer) -> None:
    def responder(body: dict[str, Any]) -> str:
        raise RuntimeError("responder bug")

    server = make_anthropic_server(responder)
    client = sdk(server)
    with pytest.raises(anthropic.NotFoundError):
        client.get("/v1/nothing-here", cast_to=object)
    with pytest.raises(anthropic.BadRequestError) as bad:
        client.post("/v1/messages", body={"model": MODEL, "messages": []}, cast_to=object)
    assert bad.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    with pytest.raises(anthropic.InternalServerError):
        client.messages.create(**ask("boom"))
    assert [type(e) for e in server.responder_errors] == [RuntimeError]

    status, _, payload = raw_request(
        server,
        "POST",
        "/v1/messages",
        b"{not json",
        {"x-api-key": API_KEY, "content-type": "application/json"},
    )
    assert status == 400
    assert json.loads(payload)["error"]["type"] == "invalid_request_error"


def test_other_methods_and_unreadable_bodies_get_api_errors_and_are_logged(
    anthropic_server: LocalAnthropicServer,
) -> None:
    server = anthropic_server
    with pytest.raises(anthropic.APIStatusError) as caught:
        sdk(server).put("/v1/messages", body=ask("put"), cast_to=object)
    assert caught.value.status_code == 405
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]

    headers = {"x-api-key": API_KEY, "content-type": "application/json"}
    for method, path, expected, error_type in [
        ("PATCH", "/v1/messages/batches", 405, "invalid_request_error"),
        ("PURGE", "/v1/messages/count_tokens", 405, "invalid_request_error"),
        ("PUT", "/v1/no-such-thing", 404, "not_found_error"),
    ]:
        status, _, payload = raw_request(server, method, path, b"{}", headers)
        assert status == expected, (method, path)
        error = json.loads(payload)
        assert error["type"] == "error" and error["error"]["type"] == error_type, error
    status, _, payload = raw_request(server, "HEAD", "/v1/messages", None, headers)
    assert (status, payload) == (405, b"")  # a reply to HEAD has no body
    body = json.dumps(ask("unreadable")).encode()
    status, reply_headers, payload = raw_request(
        server, "POST", "/v1/messages", body, {**headers, "content-length": "abc"}
    )
    assert status == 400 and reply_headers["connection"] == "close"
    error = json.loads(payload)["error"]
    assert error["type"] == "invalid_request_error" and "content-length" in error["message"]
    assert first_text(sdk(server).messages.create(**ask("still serving"))) == server.text

    assert [(r.method, r.path, r.status) for r in server.requests] == [
        ("PUT", "/v1/messages", 405),
        ("PATCH", "/v1/messages/batches", 405),
        ("PURGE", "/v1/messages/count_tokens", 405),
        ("PUT", "/v1/no-such-thing", 404),
        ("HEAD", "/v1/messages", 405),
        ("POST", "/v1/messages", 400),
        ("POST", "/v1/messages", 200),
    ]
    assert server.requests[0].body == ask("put")


def test_fault_plan_is_reproducible() -> None:
    plan = FaultPlan(rate=0.3, kinds=["rate_limit", "overloaded"], seed=7, schedule={3: "429"})
    again = FaultPlan(rate=0.3, kinds=["rate_limit", "overloaded"], seed=7)
    other_seed = FaultPlan(rate=0.3, kinds=["rate_limit", "overloaded"], seed=8)
    draws = [plan.fault_for(i) for i in range(1000)]

    assert draws[3] == "rate_limit"
    assert draws[4:] == [again.fault_for(i) for i in range(4, 1000)]
    assert draws[4:] != [other_seed.fault_for(i) for i in range(4, 1000)]
    share = sum(d is not None for d in draws) / len(draws)
    assert 0.25 < share < 0.35
    assert {d for d in draws if d} == {"rate_limit", "overloaded"}
    assert FaultPlan().fault_for(0) is None
    with pytest.raises(ValueError):
        FaultPlan(schedule={0: "meteor"})
    with pytest.raises(ValueError):
        FaultPlan(rate=1.5)


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("rate_limit", anthropic.RateLimitError),
        ("overloaded", anthropic.OverloadedError),
        ("server_error", anthropic.InternalServerError),
        ("connection_reset", anthropic.APIConnectionError),
        ("timeout", anthropic.APITimeoutError),
        ("malformed", json.JSONDecodeError),
    ],
)
def test_each_fault_kind_over_http(
    make_anthropic_server: MakeServer, kind: str, error: type[Exception]
) -> None:
    server = make_anthropic_server(faults={0: kind}, retry_after=2, hang_s=2.0)
    client = sdk(server, timeout=0.5)
    with pytest.raises(error) as caught:
        client.messages.create(**ask("fail once"))
    assert client.messages.create(**ask("then succeed")).content  # only request 0 fails

    first, second = server.requests
    assert first.fault == kind and second.fault is None and second.status == 200
    expected_status = {"rate_limit": 429, "overloaded": 529, "server_error": 500, "malformed": 200}
    assert first.status == expected_status.get(kind)
    if kind == "rate_limit":
        assert isinstance(caught.value, anthropic.RateLimitError)
        assert caught.value.response.headers["retry-after"] == "2"
        assert caught.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    if kind == "overloaded":
        assert isinstance(caught.value, anthropic.APIStatusError)
        assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    assert set(FAULT_KINDS) >= {kind}


def test_latency_can_depend_on_the_request(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(latency=lambda body: 0.3 if "slow" in last_user_text(body) else 0.0)
    client = sdk(server)
    client.messages.create(**ask("fast please"))
    client.messages.create(**ask("slow please"))
    fast, slow = server.requests
    assert fast.duration_s is not None and fast.duration_s < 0.2
    assert slow.duration_s is not None and slow.duration_s >= 0.3


def test_latency_includes_the_time_the_reply_takes_to_make(make_anthropic_server: MakeServer) -> None:
    def slow_responder(body: dict[str, Any]) -> str:
        time.sleep(0.2)
        return "done"

    server = make_anthropic_server(slow_responder, latency=0.3)
    sdk(server).messages.create(**ask("hello"))
    (record,) = server.requests
    assert (
        record.duration_s is not None and 0.3 <= record.duration_s < 0.45
    )  # not 0.5: the wait is what is left


def _raw_exchange(server: LocalAnthropicServer, *parts: bytes, pause: float = 0.0) -> tuple[bytes, float]:
    """Send `parts` on one connection, `pause` seconds apart; the raw response and seconds from the first send."""
    port = int(server.base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5.0) as sock:
        started = time.monotonic()
        for i, part in enumerate(parts):
            if i:
                time.sleep(pause)
            sock.sendall(part)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            head, _, rest = b"".join(chunks).partition(b"\r\n\r\n")
            length = re.search(rb"content-length: (\d+)", head, re.I)
            if length and len(rest) >= int(length.group(1)):
                break
        return b"".join(chunks), time.monotonic() - started


def _post(body: bytes, *headers: str, version: str = "HTTP/1.1") -> tuple[bytes, bytes]:
    head = [f"POST /v1/messages {version}", "host: 127.0.0.1", "x-api-key: k", *headers]
    head.append(f"content-length: {len(body)}")
    return f"{head[0]}\r\n".encode(), ("\r\n".join(head[1:]) + "\r\n\r\n").encode() + body


def test_latency_counts_from_the_request_line(make_anthropic_server: MakeServer) -> None:
    """A request whose headers and body come 0.2 s after its first line is answered 0.3 s after that line."""
    server = make_anthropic_server(latency=0.3)
    body = json.dumps(ask("hello")).encode()
    response, seconds = _raw_exchange(server, *_post(body), pause=0.2)
    assert response.startswith(b"HTTP/1.1 200 OK\r\n")
    assert 0.3 <= seconds < 0.45  # not 0.5: reading the request is part of the latency


def test_raw_requests_are_parsed_as_http_1_1(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(rules=[("hello", "hi")])
    body = json.dumps(ask("hello")).encode()
    response, _ = _raw_exchange(server, b"".join(_post(body, "X-Trace: a", "x-trace: b")))
    head, _, payload = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"connection: close" not in head.lower()
    assert json.loads(payload)["content"][0]["text"] == "hi"
    (record,) = server.requests
    assert record.auth == "x-api-key" and "x-trace" in record.header_names
    # HTTP/1.0 closes the connection after the reply, and says so
    response, _ = _raw_exchange(server, b"".join(_post(body, version="HTTP/1.0")))
    assert b"connection: close" in response.partition(b"\r\n\r\n")[0].lower()
    # malformed requests get an error status, not a dropped connection
    bad = [
        (b"POST /v1/messages\r\n\r\n", b"400"),
        (b"POST /v1/messages HTTP/2.0\r\n\r\n", b"400"),
        (b"POST /v1/messages HTTP/1.1\r\nno colon here\r\n\r\n", b"400"),
        (b"POST /v1/messages HTTP/1.1\r\n" + b"x-h: v\r\n" * 101 + b"\r\n", b"431"),
    ]
    for request, status in bad:
        response, _ = _raw_exchange(server, request)
        assert response.split(b" ", 2)[1] == status, response[:80]
    assert len(server.requests) == 2  # neither reached the API


def test_serves_fifty_slow_requests_concurrently(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(latency=0.5)
    client = sdk(server, timeout=10.0)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=50) as pool:
        replies = list(pool.map(lambda i: client.messages.create(**ask(f"request {i}")), range(50)))
    elapsed = time.monotonic() - started

    assert len(replies) == 50
    assert elapsed < 3.0  # one after another would take 25 s
    assert server.max_in_flight >= 40
    assert server.in_flight == 0


def test_stop_wakes_a_hanging_request(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(faults={0: "timeout"}, hang_s=30.0)
    client = sdk(server, timeout=20.0)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            client.messages.create(**ask("hang"))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    while not server.requests:
        time.sleep(0.01)
    started = time.monotonic()
    server.stop()
    thread.join(timeout=5)
    assert time.monotonic() - started < 3.0
    assert not thread.is_alive()
    assert errors and isinstance(errors[0], anthropic.APIConnectionError)


def test_timeout_fault_holds_the_request_until_the_client_gives_up(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(faults={0: "timeout"})  # the default hang_s
    with pytest.raises(anthropic.APITimeoutError):
        sdk(server, timeout=0.5).messages.create(**ask("hang"))
    deadline = time.monotonic() + 3.0
    while server.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    (record,) = server.requests
    assert (record.fault, record.status) == ("timeout", None)
    # let go when the client closed its connection, not hang_s later
    assert record.duration_s is not None and 0.4 <= record.duration_s < 2.0  # (~0.5: the client's timeout)
    assert server.hang_s > 600  # outlasts the SDK's default timeout (10 minutes): the client times out first

    # a hang_s shorter than the client's timeout ends the request unanswered at hang_s
    short = make_anthropic_server(faults={0: "timeout"}, hang_s=0.3)
    with pytest.raises(anthropic.APIConnectionError) as caught:
        sdk(short, timeout=5.0).messages.create(**ask("hang briefly"))
    assert not isinstance(caught.value, anthropic.APITimeoutError)
    (held,) = short.requests
    assert held.duration_s is not None and 0.3 <= held.duration_s < 1.5


# ---- batches -------------------------------------------------------------------------------------------------


def test_batch_round_trip_through_the_sdk(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(rules=[("refund", "billing")], batch_delay=0.3, models=PINNED_MODEL_IDS)
    client = sdk(server)
    batch = client.messages.batches.create(
        requests=cast(
            Any,
            [
                {"custom_id": "t-1", "params": ask("refund please")},
                {"custom_id": "t-2", "params": {"model": MODEL, "messages": [], "max_tokens": 5}},
            ],
        )
    )
    assert batch.processing_status == "in_progress"
    assert batch.request_counts.processing == 2
    assert batch.results_url is None
    assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
    with pytest.raises(anthropic.AnthropicError):
        client.messages.batches.results(batch.id)

    deadline = time.monotonic() + 5
    while (current := client.messages.batches.retrieve(batch.id)).processing_status != "ended":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert current.request_counts.succeeded == 1 and current.request_counts.errored == 1
    assert current.ended_at is not None
    assert current.results_url == f"{server.base_url}/v1/messages/batches/{batch.id}/results"

    results = {line.custom_id: line.result for line in client.messages.batches.results(batch.id)}
    succeeded = results["t-1"]
    assert succeeded.type == "succeeded"
    assert first_text(succeeded.message) == "billing"
    assert succeeded.message.model == "claude-haiku-4-5-20251001"
    assert succeeded.message.usage.service_tier == "batch"
    errored = results["t-2"]
    assert errored.type == "errored"
    assert errored.error.error.type == "invalid_request_error"
    assert batch.id in [b.id for b in client.messages.batches.list()]
    client.messages.batches.delete(batch.id)
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve(batch.id)


def test_batch_cancel_through_the_sdk(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(batch_delay=60)
    client = sdk(server)
    batch = client.messages.batches.create(
        requests=cast(Any, [{"custom_id": f"c-{i}", "params": ask(f"item {i}")} for i in range(3)])
    )
    canceled = client.messages.batches.cancel(batch.id)
    assert canceled.processing_status == "canceling"
    assert canceled.cancel_initiated_at is not None
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended"
    assert ended.request_counts.canceled == 3
    assert {line.result.type for line in client.messages.batches.results(batch.id)} == {"canceled"}


def test_batch_ended_at_does_not_depend_on_when_it_is_retrieved(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(batch_delay=0.2)
    client = sdk(server)
    one = [{"custom_id": "only", "params": ask("hello")}]
    batch = client.messages.batches.create(requests=cast(Any, one))
    time.sleep(1.0)  # looked at long after it ended
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended" and ended.ended_at is not None
    assert (ended.ended_at - ended.created_at).total_seconds() == pytest.approx(0.2, abs=0.001)
    assert client.messages.batches.retrieve(batch.id).ended_at == ended.ended_at

    server.batch_delay = 60.0
    canceled = client.messages.batches.create(requests=cast(Any, one))
    client.messages.batches.cancel(canceled.id)
    time.sleep(0.5)
    after_cancel = client.messages.batches.retrieve(canceled.id)
    assert after_cancel.processing_status == "ended"
    assert after_cancel.ended_at == after_cancel.cancel_initiated_at  # it ended at its cancel


def test_batch_list_pages_by_limit_and_cursors(anthropic_server: LocalAnthropicServer) -> None:
    client = sdk(anthropic_server)
    one = cast(Any, [{"custom_id": "only", "params": ask("hello")}])
    newest_first = [client.messages.batches.create(requests=one).id for _ in range(23)][::-1]

    page = client.messages.batches.list(limit=2)
    assert [b.id for b in page.data] == newest_first[:2]
    assert (page.has_more, page.first_id, page.last_id) == (True, newest_first[0], newest_first[1])
    default = client.messages.batches.list()
    assert [b.id for b in default.data] == newest_first[:20] and default.has_more  # 20 by default
    rest = client.messages.batches.list(after_id=newest_first[19])
    assert [b.id for b in rest.data] == newest_first[20:] and rest.has_more is False
    before = client.messages.batches.list(before_id=newest_first[3], limit=2)
    assert [b.id for b in before.data] == newest_first[1:3] and before.has_more
    # the SDK's auto-pagination, forwards (after_id) and backwards (before_id), visits each batch once
    anthropic_server.clear_log()
    assert [b.id for b in client.messages.batches.list(limit=5)] == newest_first
    assert len(anthropic_server.requests) == 5
    backwards = client.messages.batches.list(before_id=newest_first[5], limit=2)
    assert [b.id for b in backwards] == newest_first[3:5] + newest_first[1:3] + newest_first[:1]
    for bad in ({"limit": 0}, {"limit": 1001}, {"after_id": "msgbatch_nope"}):
        with pytest.raises((anthropic.BadRequestError, anthropic.NotFoundError)):
            client.messages.batches.list(**bad)


# ---- fixtures and command line ---------------------------------------------------------------------------------


def test_factory_fixture_builds_configured_servers(make_anthropic_server: MakeServer) -> None:
    first = make_anthropic_server(text="one")
    second = make_anthropic_server(lambda body: "two")
    assert first.port != second.port
    assert first_text(sdk(first).messages.create(**ask("x"))) == "one"
    assert first_text(sdk(second).messages.create(**ask("x"))) == "two"


def test_fixture_plugin_in_a_fresh_pytest_run(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["evalkit.testing.fixtures"]\n')
    (tmp_path / "test_plugin.py").write_text(
        textwrap.dedent(
            """
            import os

            import anthropic


            def test_default_server(anthropic_server):
                client = anthropic.Anthropic(base_url=anthropic_server.base_url, api_key="k" * 10)
                reply = client.messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
                )
                assert reply.content[0].text == anthropic_server.text


            def test_factory(make_anthropic_server):
                server = make_anthropic_server(text="made", faults={0: "overloaded"})
                client = anthropic.Anthropic(base_url=server.base_url, api_key="k" * 10, max_retries=0)
                try:
                    client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
                except anthropic.APIStatusError as exc:
                    assert exc.status_code == 529
                else:
                    raise AssertionError("expected 529")


            def test_env(anthropic_env):
                assert os.environ["ANTHROPIC_BASE_URL"] == anthropic_env.base_url
                reply = anthropic.Anthropic().messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
                )
                assert reply.content[0].text == anthropic_env.text
            """
        )
    )
    # Installed plugins are not needed here (the conftest names the one under test); skipping them is faster.
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env = {k: v for k, v in env.items() if not k.startswith("ANTHROPIC_")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout


def test_command_line_serves_until_interrupted() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalkit.testing.server",
            "--port",
            "0",
            "--text",
            "offline reply",
            "--resolve-models",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        client = track(anthropic.Anthropic(base_url=base_url, api_key=API_KEY, max_retries=0))
        reply = client.messages.create(**ask("hello"))
        assert first_text(reply) == "offline reply"
        assert reply.model == "claude-haiku-4-5-20251001"
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert "RuntimeWarning" not in stderr


@contextlib.contextmanager
def serving_command_line(*args: str) -> Iterator[str]:
    """Run ``python -m evalkit.testing.server._server`` with these arguments; yields its base URL, then stops it with Ctrl-C."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "evalkit.testing.server", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=10)
        assert process.returncode == 0, stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_command_line_injects_faults_on_ipv4_and_ipv6(host: str) -> None:
    if host == "::1" and not _has_ipv6_loopback():
        pytest.skip("no IPv6 loopback here")
    args = ["--host", host, "--fault-rate", "0.5", "--faults", "overloaded,500", "--seed", "3"]
    plan = FaultPlan(rate=0.5, kinds=["overloaded", "server_error"], seed=3)
    expected = [{None: 200, "overloaded": 529, "server_error": 500}[plan.fault_for(i)] for i in range(6)]
    assert set(expected) == {200, 500, 529}
    statuses = []
    with serving_command_line(*args) as base_url:
        assert base_url.startswith("http://[::1]:" if host == "::1" else "http://127.0.0.1:"), base_url
        client = track(anthropic.Anthropic(base_url=base_url, api_key=API_KEY, max_retries=0))
        for i in range(6):
            try:
                client.messages.create(**ask(f"request {i}"))
                statuses.append(200)
            except anthropic.APIStatusError as exc:
                statuses.append(exc.status_code)
    assert statuses == expected


def test_command_line_fault_flags_make_a_fault_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert _parse_args([]).fault_plan.rate == 0  # no faults unless asked for
    assert _parse_args(["--fault-rate", "0.25", "--seed", "5"]).fault_plan == FaultPlan(
        rate=0.25, kinds=FAULT_KINDS, seed=5
    )  # every kind by default
    assert _parse_args(["--fault-rate", "1", "--faults", "429, timeout"]).fault_plan.kinds == (
        "rate_limit",
        "timeout",
    )
    with pytest.raises(SystemExit):
        _parse_args(["--help"])
    help_text = capsys.readouterr().out
    assert "--fault-rate RATE" in help_text and "--faults KINDS" in help_text and "--seed" in help_text

    for argv, message in [
        (["--fault-rate", "1.5"], "--fault-rate: must be from 0 to 1"),
        (["--fault-rate", "nan"], "--fault-rate: must be from 0 to 1"),
        (["--fault-rate", "lots"], "invalid float value: 'lots'"),
        (["--fault-rate", "0.1", "--faults", "overloaded,meteor"], "unknown fault kind 'meteor'"),
        (["--fault-rate", "0.1", "--faults", ","], "--faults: name at least one of"),
        (["--faults", "timeout"], "--faults: needs --fault-rate above 0"),
        (["--seed", "x"], "invalid int value: 'x'"),
    ]:
        with pytest.raises(SystemExit) as exited:
            _parse_args(argv)
        assert exited.value.code == 2, argv
        assert message in capsys.readouterr().err, argv

    with socket.socket() as taken:  # a port in use is a usage error too, not a traceback
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["--port", str(taken.getsockname()[1])]) == 2
    assert "error: cannot serve on --host 127.0.0.1" in capsys.readouterr().err
