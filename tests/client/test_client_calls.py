"""Calls, results, structured output, SDK set-up and concurrency, against the local server."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from client_helpers import MODEL, TICKET, MakeServer, Ticket, ask, client_for

from evalkit._client import (
    CallResult,
    is_structured,
    output_format_for,
    structured_request,
)
from evalkit.errors import CallError
from evalkit.testing import PINNED_MODEL_IDS, LocalAnthropicServer, Reply

# ---- results ---------------------------------------------------------------------------------------------------


def test_create_returns_text_usage_cost_and_ids(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(rules=[("charged", "billing")], models=PINNED_MODEL_IDS)
    with client_for(server) as client:
        result = client.create(ask())

    (record,) = server.requests
    usage = result.message["usage"]
    assert result.text == "billing"
    assert result.json is None
    assert result.model == "claude-haiku-4-5-20251001"
    assert result.requested_model == MODEL
    assert result.request_id is not None and result.request_id.startswith("req_local_")
    assert result.stop_reason == "end_turn"
    assert result.input_tokens == usage["input_tokens"] > 0
    assert result.output_tokens == usage["output_tokens"] > 0
    assert result.cache_creation_input_tokens == 0 and result.cache_read_input_tokens == 0
    assert result.cost_usd == pytest.approx((result.input_tokens * 1.0 + result.output_tokens * 5.0) / 1e6)
    assert 0 < result.latency_s < 5
    assert result.batch is False
    assert result.message["content"] == [{"type": "text", "text": "billing"}]
    assert record.body == ask()


def test_unknown_model_has_no_cost(anthropic_server: LocalAnthropicServer) -> None:
    result = client_for(anthropic_server).create(ask(model="house-model-7"))
    assert result.model == "house-model-7"
    assert result.cost_usd is None


def test_cache_usage_is_priced(make_anthropic_server: MakeServer) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100, "cache_creation_input_tokens": 2000}
    server = make_anthropic_server(
        lambda body: Reply(text="ok", usage={**usage, "cache_read_input_tokens": 4000})
    )
    result = client_for(server).create(ask(model="claude-haiku-4-5-20251001"))
    expected = (1000 * 1 + 100 * 5 + 2000 * 1.25 + 4000 * 0.1) / 1e6
    assert result.cache_creation_input_tokens == 2000 and result.cache_read_input_tokens == 4000
    assert result.cost_usd == pytest.approx(expected)


def test_result_rebuilds_from_its_message(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(lambda body: TICKET, models=PINNED_MODEL_IDS)
    client = client_for(server)
    for request in (ask(), structured_request(ask(), Ticket)):
        result = client.create(request)
        cached = json.loads(json.dumps(result.message))  # as a cache would store it
        rebuilt = CallResult.from_message(
            cached,
            requested_model=MODEL,
            latency_s=result.latency_s,
            structured=is_structured(request),
            request_id=result.request_id,
        )
        assert rebuilt == result
    assert CallResult.model_validate_json(result.model_dump_json()) == result
    with pytest.raises(CallError) as caught:
        CallResult.from_message({"type": "error"}, requested_model=MODEL)
    assert caught.value.kind == "bad_response"


def test_request_keys_the_sdk_does_not_take_are_sent_in_the_body(
    anthropic_server: LocalAnthropicServer,
) -> None:
    request = ask(temperature=0.0, top_p=0.9, metadata={"user_id": "u-1"}, stop_sequences=["END"])
    client_for(anthropic_server).create(request)
    assert anthropic_server.requests[0].body == request


def test_requests_are_checked_before_sending(anthropic_server: LocalAnthropicServer) -> None:
    client = client_for(anthropic_server)
    with pytest.raises(ValueError, match="max_tokens"):
        client.create({"model": MODEL, "messages": []})
    with pytest.raises(ValueError, match="stream"):
        client.create(ask(stream=True))
    assert anthropic_server.requests == []


# ---- structured output -----------------------------------------------------------------------------------------


def test_structured_request_is_what_messages_parse_sends(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(lambda body: TICKET)
    client = client_for(server)
    instance, parsed = client.parse(ask(), Ticket)
    created = client.create(structured_request(ask(), Ticket))

    parse_body, create_body = (r.body for r in server.requests)
    assert create_body == parse_body
    assert parse_body["output_config"] == {"format": output_format_for(Ticket)}
    assert parse_body["output_config"]["format"]["type"] == "json_schema"
    assert instance == Ticket.model_validate(TICKET)
    assert parsed.json == created.json == TICKET
    assert parsed.message["content"] == created.message["content"]  # no SDK-only fields (parsed_output)
    assert created.text == json.dumps(TICKET)


def test_structured_request_keeps_other_output_settings() -> None:
    request = ask(output_config={"effort": "low"})
    out = structured_request(request, Ticket)
    assert out["output_config"]["effort"] == "low"
    assert out["output_config"]["format"] == output_format_for(Ticket)
    assert "format" not in request["output_config"]  # the input is not changed
    assert is_structured(out) and not is_structured(request)


def test_parse_of_a_reply_that_does_not_fit_is_a_bad_response(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(lambda body: {"label": "weather"})
    with pytest.raises(CallError) as caught:
        client_for(server, max_retries=0).parse(ask(), Ticket)
    assert caught.value.kind == "bad_response"
    assert len(server.requests) == 1  # not retried: the model's output is the problem
    result = client_for(server).create(structured_request(ask(), Ticket))
    assert result.json == {"label": "weather"}  # create leaves validation to the caller


def test_async_create_and_parse(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(lambda body: TICKET)
    client = client_for(server)

    async def main() -> tuple[CallResult, tuple[Ticket, CallResult]]:
        try:
            return await client.acreate(ask()), await client.aparse(ask(), Ticket)
        finally:
            await client.aclose()

    created, (instance, parsed) = asyncio.run(main())
    assert created.text == json.dumps(TICKET) and created.json is None
    assert instance.label == "billing" and parsed.json == TICKET
    # a second event loop gets its own SDK client and semaphore

    async def again() -> CallResult:
        try:
            return await client.acreate(ask())
        finally:
            await client.aclose()

    assert asyncio.run(again()).text == created.text


def test_clients_share_one_tls_context(
    make_anthropic_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each SDK client would read the CA bundle again (~20 ms); the process makes its TLS context once."""
    import evalkit._client._sdk as client_module

    made: list[object] = []
    real = client_module.httpx2.create_ssl_context

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(client_module, "_tls", None)
    monkeypatch.setattr(client_module.httpx2, "create_ssl_context", counting)
    server = make_anthropic_server(lambda body: "ok")
    clients = [client_for(server) for _ in range(3)]
    assert [c.create(ask()).text for c in clients] == ["ok"] * 3

    async def one() -> str:
        try:
            return (await clients[0].acreate(ask())).text
        finally:
            await clients[0].aclose()

    assert asyncio.run(one()) == "ok"
    client_module.warm_up()
    assert len(made) == 1 and client_module.tls_context() is made[0]


@pytest.mark.parametrize("provider_set_up", [True, False])
def test_calls_are_traced_only_where_a_tracer_provider_is_set_up(
    make_anthropic_server: MakeServer, monkeypatch: pytest.MonkeyPatch, provider_set_up: bool
) -> None:
    """Where an application has set up OpenTelemetry, the SDK's spans of evalkit's calls reach it; where
    nothing would record them, the SDK is told not to build them."""
    from opentelemetry import trace

    started: list[str] = []

    class Tracer(trace.NoOpTracer):
        def start_span(self, name: str, *args: Any, **kwargs: Any) -> trace.Span:
            started.append(name)
            return super().start_span(name, *args, **kwargs)

    asked: list[str] = []
    base = trace.NoOpTracerProvider if provider_set_up else trace.ProxyTracerProvider

    class Provider(base):  # type: ignore[valid-type,misc]
        def get_tracer(self, name: str, *args: Any, **kwargs: Any) -> trace.Tracer:
            asked.append(name)
            return Tracer()

    monkeypatch.setattr(trace, "get_tracer_provider", lambda: Provider())
    server = make_anthropic_server(lambda body: "ok")
    with client_for(server) as client:
        assert client.create(ask()).text == "ok"
    if provider_set_up:
        assert asked and started, "the application's tracer provider saw no span of the call"
    else:
        assert asked == [] and started == []


def test_warm_up_runs_the_sdk_path_offline() -> None:
    """warm_up makes one call through the SDK without a server, and loads what a first connection would."""
    import subprocess
    import sys

    code = (
        "import sys; from evalkit._client import warm_up; warm_up(); "
        "print('encodings.idna' in sys.modules, 'anthropic.resources.messages' in sys.modules)"
    )
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "HOME": "/nonexistent"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


# ---- concurrency -----------------------------------------------------------------------------------------------


def test_async_calls_are_bounded_by_max_concurrency(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(latency=0.2)
    client = client_for(server, max_concurrency=4)

    async def main() -> list[CallResult]:
        try:
            return await asyncio.gather(*(client.acreate(ask(f"question {i}")) for i in range(12)))
        finally:
            await client.aclose()

    started = time.monotonic()
    results = asyncio.run(main())
    elapsed = time.monotonic() - started

    assert len(results) == 12
    assert 0.55 <= elapsed < 2.0  # three rounds of 0.2 s
    assert server.max_in_flight == 4


def test_blocking_calls_from_many_threads_are_bounded_by_max_concurrency(
    make_anthropic_server: MakeServer,
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    server = make_anthropic_server(lambda body: TICKET, latency=0.2)
    client = client_for(server, max_concurrency=8)
    calls: list[Callable[[], object]] = [
        lambda: client.create(ask()),
        lambda: client.parse(ask(), Ticket),
        lambda: client.count_tokens(ask()),
    ]
    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda i: calls[i % 3](), range(32)))

    assert len(results) == 32 and all(results)
    assert server.max_in_flight == 8


def test_each_event_loop_keeps_its_own_async_client_until_it_closes_it(
    anthropic_server: LocalAnthropicServer,
) -> None:
    """Two loops at once: neither replaces the other's SDK client (and so its bound), and each one's aclose
    closes its own client, not the other loop's."""
    client = client_for(anthropic_server)
    a_started, b_done = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    async def loop_a() -> None:
        await client.acreate(ask())
        seen["a"] = client._async_parts()[0]
        a_started.set()
        await asyncio.to_thread(b_done.wait, 10)  # loop b runs meanwhile
        await client.acreate(ask())
        seen["a again"] = client._async_parts()[0]
        await client.aclose()

    async def loop_b() -> None:
        await client.acreate(ask())
        seen["b"] = client._async_parts()[0]
        await client.aclose()

    thread = threading.Thread(target=lambda: asyncio.run(loop_a()))
    thread.start()
    try:
        assert a_started.wait(10)
        asyncio.run(loop_b())
    finally:
        b_done.set()
        thread.join(10)
    assert seen["a again"] is seen["a"] and seen["b"] is not seen["a"]
    assert seen["a"].is_closed() and seen["b"].is_closed()
    assert len(anthropic_server.requests) == 3


# ---- count_tokens ----------------------------------------------------------------------------------------------


def test_count_tokens_equals_the_usage_of_the_same_request(anthropic_server: LocalAnthropicServer) -> None:
    client = client_for(anthropic_server)
    request = structured_request(
        ask(
            system="Sort tickets into queues.",
            temperature=0.0,
            tools=[{"name": "lookup", "description": "Find an order", "input_schema": {"type": "object"}}],
        ),
        Ticket,
    )
    counted = client.count_tokens(request)
    assert counted == client.create(request).input_tokens
    count_body = anthropic_server.requests[0].body
    assert "max_tokens" not in count_body and "temperature" not in count_body
    assert client.count_tokens(ask()) < counted


def test_count_tokens_counts_a_top_level_output_format(anthropic_server: LocalAnthropicServer) -> None:
    """The older top-level ``output_format`` goes in create's body; count_tokens sends it too."""
    client = client_for(anthropic_server)
    request = ask(output_format=output_format_for(Ticket))
    counted = client.count_tokens(request)
    assert counted == client.create(request).input_tokens
    assert counted > client.count_tokens(ask())
    count_body, create_body = (r.body for r in anthropic_server.requests[:2])
    assert count_body["output_format"] == create_body["output_format"] == output_format_for(Ticket)


def test_each_thread_calls_through_its_own_sdk_client(anthropic_server: LocalAnthropicServer) -> None:
    """Threads share no connection pool (its lock made them queue), and a finished thread's client is closed."""
    import threading

    client = client_for(anthropic_server)
    mine = client.sync_client
    assert client.sync_client is mine
    seen: list[Any] = []

    def call() -> None:
        client.create(ask())
        seen.append(client.sync_client)

    first = threading.Thread(target=call)
    first.start()
    first.join()
    assert seen[0] is not mine and not seen[0].is_closed()
    second = threading.Thread(target=call)
    second.start()
    second.join()
    assert seen[1] is not seen[0]
    assert seen[
        0
    ].is_closed()  # closed when the next thread made its own: a long session does not pile them up
    client.close()
    assert mine.is_closed() and seen[1].is_closed()
    assert client.create(ask()).text  # usable again after close: a new client for this thread


def test_errors_and_prices_import_without_the_sdk() -> None:
    code = (
        "import sys; from evalkit._client import current_prices, redact_url; "
        "from evalkit.errors import CallError; "
        "from evalkit._client import CallResult; "
        "CallError('timeout'); current_prices(); "
        "print('anthropic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False", done.stderr


def test_the_sdks_model_ids_come_from_the_client_only() -> None:
    from evalkit._client import sdk_model_ids

    ids = sdk_model_ids()
    assert "claude-haiku-4-5" in ids and all(isinstance(i, str) and i for i in ids)
    root = Path(__file__).resolve().parents[2] / "evalkit"
    importers = [
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if re.search(r"^\s*(from|import) anthropic\b", path.read_text(encoding="utf-8"), re.MULTILINE)
    ]
    assert importers and all(path.startswith("_client/") for path in importers), importers
