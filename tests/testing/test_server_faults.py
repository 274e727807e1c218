"""The local Anthropic-compatible server, through the official SDK: api errors, injected faults, latency and raw http."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import pytest
from server_helpers import (
    API_KEY,
    MODEL,
    MakeServer,
    ask,
    first_text,
    raw_request,
    sdk,
)

from evalkit.testing import FAULT_KINDS, FaultPlan, LocalAnthropicServer
from evalkit.testing.server import last_user_text

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
