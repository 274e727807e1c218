"""evalkit's client and price table, against the local server through the real SDK."""

from __future__ import annotations

import asyncio
import http.server
import json
import pickle
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pydantic
import pytest

from evalkit.client import _pricing as pricing
from evalkit.client._client import (
    BatchStatus,
    CallError,
    CallResult,
    Client,
    _errored_kind,
    is_structured,
    output_format_for,
    structured_request,
)
from evalkit.errors import EvalkitError
from evalkit.testing import PINNED_MODEL_IDS, FaultPlan, LocalAnthropicServer, Reply

API_KEY = "sk-ant-test-client-fedcba9876543210"
MODEL = "claude-haiku-4-5"
MakeServer = Callable[..., LocalAnthropicServer]


class Ticket(pydantic.BaseModel):
    label: Literal["billing", "account", "shipping"]
    priority: int
    summary: str


TICKET = {"label": "billing", "priority": 2, "summary": "Charged twice"}


def ask(text: str = "My card was charged twice.", **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 200, "messages": [{"role": "user", "content": text}], **extra}


_open_clients: list[Client] = []


def client_for(server: LocalAnthropicServer, **kwargs: Any) -> Client:
    client = Client(api_key=API_KEY, base_url=server.base_url, **kwargs)
    _open_clients.append(client)
    return client


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No ambient credentials or price file; clients made by the test are closed after it."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", pricing.PRICES_ENV_VAR):
        monkeypatch.delenv(name, raising=False)
    yield
    while _open_clients:
        _open_clients.pop().close()


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
    import evalkit.client._client as client_module

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
        "import sys; from evalkit.client._client import warm_up; warm_up(); "
        "print('encodings.idna' in sys.modules, 'anthropic.resources.messages' in sys.modules)"
    )
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "HOME": "/nonexistent"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]


# ---- auth ------------------------------------------------------------------------------------------------------


def test_key_and_url_from_the_environment(
    anthropic_server: LocalAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
    with Client() as client:
        assert client.create(ask()).text == anthropic_server.text
    assert anthropic_server.requests[0].auth == "bearer"


def test_an_empty_base_url_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "")
    client = Client(api_key=API_KEY, max_retries=0)
    _open_clients.append(client)
    with pytest.raises(CallError) as caught:
        client.create(ask())
    assert caught.value.kind == "connection"
    assert "ANTHROPIC_BASE_URL is set but empty" in str(caught.value)


def test_missing_credentials_are_an_auth_error(
    anthropic_server: LocalAnthropicServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials profile to discover either
    for name in (
        "ANTHROPIC_CONFIG_DIR",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_IDENTITY_TOKEN",
        "ANTHROPIC_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    with Client(base_url=anthropic_server.base_url) as client, pytest.raises(CallError) as caught:
        client.create(ask())
    assert caught.value.kind == "auth"
    assert anthropic_server.requests == []
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "missing"))  # a profile that is not there
    with Client(base_url=anthropic_server.base_url) as client, pytest.raises(CallError) as caught:
        client.create(ask())
    assert caught.value.kind == "auth"


def test_rejected_key_is_an_auth_error_that_does_not_show_the_key(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(api_key="sk-ant-the-only-valid-key-000")
    client = client_for(server)
    with pytest.raises(CallError) as caught:
        client.create(ask())

    error = caught.value
    assert (error.kind, error.status) == ("auth", 401)
    assert error.request_id is not None
    assert not error.retryable
    assert len(server.requests) == 1
    assert API_KEY not in str(error) and API_KEY not in repr(error) and API_KEY not in repr(client)


@pytest.mark.parametrize("source", ["argument", "environment"])
@pytest.mark.parametrize("padded", [API_KEY + "\n", API_KEY + " ", "\t" + API_KEY, API_KEY + "\r\n"])
def test_a_key_with_surrounding_whitespace_is_refused_without_showing_it(
    anthropic_server: LocalAnthropicServer, monkeypatch: pytest.MonkeyPatch, padded: str, source: str
) -> None:
    """httpx refuses a header value ending in a newline with an error that quotes it (the run directory keeps the
    error's text): the client refuses the key first, and says why without showing it."""
    if source == "environment":
        monkeypatch.setenv("ANTHROPIC_API_KEY", padded)
    key = padded if source == "argument" else None
    client = Client(api_key=key, base_url=anthropic_server.base_url, max_retries=0)
    _open_clients.append(client)

    async def acreate() -> CallResult:
        try:
            return await client.acreate(ask())
        finally:
            await client.aclose()

    for call in (lambda: client.create(ask()), lambda: asyncio.run(acreate())):
        with pytest.raises(CallError) as caught:
            call()
        error = caught.value
        assert (error.kind, error.status) == ("auth", None) and not error.retryable
        assert "whitespace" in error.message
        shown = str(error) + repr(error) + json.dumps(error.to_dict())
        assert API_KEY not in shown and API_KEY[:12] not in shown
    assert anthropic_server.requests == []


def test_error_texts_are_scrubbed_of_every_form_of_the_key() -> None:
    key = "sk-ant-odd\tkey-0123456789"
    texts = [
        f"LocalProtocolError: Illegal header value {('Bearer ' + key + chr(10)).encode()!r}",
        f"header {key + chr(10)!r}",
        f"body {json.dumps({'k': key})}",
        f"stripped {key.strip()} and as is {key}",
    ]
    for padded in (key + "\n", key + " ", key):
        client = Client(api_key=padded)
        for text in texts:
            scrubbed = client._scrub(text)
            assert "sk-ant-odd" not in scrubbed and "[redacted]" in scrubbed, (padded, scrubbed)


def test_api_key_never_reaches_the_request_log(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(faults={0: "rate_limit", 3: "server_error"}, retry_after=0.05)
    client = client_for(server, max_retries=2)
    client.create(ask())
    client.count_tokens(ask())
    client.parse(ask(), Ticket)
    batch_id = client.submit_batch([("one", ask())])
    client.batch_results(batch_id)

    log = server.requests
    assert len(log) >= 7
    assert all(r.auth == "bearer" for r in log)
    assert API_KEY not in repr(log)
    assert API_KEY not in json.dumps([{"body": r.body, "headers": dict(r.headers)} for r in log])


# ---- faults and retries ----------------------------------------------------------------------------------------

FAULTS = ["rate_limit", "overloaded", "server_error", "connection_reset", "timeout", "malformed"]


@pytest.mark.parametrize("kind", FAULTS)
def test_a_fault_is_retried_and_the_call_succeeds(make_anthropic_server: MakeServer, kind: str) -> None:
    server = make_anthropic_server(faults={0: kind}, retry_after=1, hang_s=1.5)
    result = client_for(server, max_retries=2, timeout=0.5).create(ask())

    assert result.text == server.text
    first, second = server.requests
    assert (first.fault, second.fault) == (kind, None)
    assert second.status == 200
    assert result.request_id == f"req_local_{second.index:012x}"
    if kind == "rate_limit":
        assert first.status == 429
        assert second.started_at - first.started_at >= 1.0  # waited for retry-after
    if kind == "timeout":
        assert second.started_at - first.started_at >= 0.5  # the client gave up at its timeout


@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [
        ("rate_limit", "rate_limit", 429),
        ("overloaded", "overloaded", 529),
        ("server_error", "server", 500),
        ("connection_reset", "connection", None),
        ("timeout", "timeout", None),
        ("malformed", "bad_response", None),
    ],
)
def test_spent_retries_raise_a_call_error(
    make_anthropic_server: MakeServer, fault: str, kind: str, status: int | None
) -> None:
    server = make_anthropic_server(faults=FaultPlan(rate=1.0, kinds=[fault]), retry_after=0.05, hang_s=1.0)
    with pytest.raises(CallError) as caught:
        client_for(server, max_retries=1, timeout=0.3).create(ask())

    error = caught.value
    assert (error.kind, error.status) == (kind, status)
    assert error.retryable
    assert len(server.requests) == 2  # the first try and one retry
    if status is not None:
        assert error.request_id == f"req_local_{server.requests[-1].index:012x}"
    assert API_KEY not in str(error)


def test_call_error_round_trips() -> None:
    error = CallError("overloaded", 529, "Overloaded", "req_1")
    assert pickle.loads(pickle.dumps(error)) == error
    assert CallError.from_dict(error.to_dict()) == error
    assert str(error) == "overloaded 529: Overloaded (request req_1)"


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


# ---- batches ---------------------------------------------------------------------------------------------------


def test_batch_round_trip(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(
        lambda body: TICKET if is_structured(body) else "plain", batch_delay=0.2, models=PINNED_MODEL_IDS
    )
    client = client_for(server)
    items = [
        ("text", ask()),
        ("structured", structured_request(ask(), Ticket)),
        ("invalid", {"model": MODEL, "max_tokens": 10, "messages": [{"role": "system", "content": "x"}]}),
    ]
    batch_id = client.submit_batch(items)

    status = client.batch_status(batch_id)
    assert isinstance(status, BatchStatus)
    assert (status.processing_status, status.processing, status.total) == ("in_progress", 3, 3)
    with pytest.raises(CallError, match="has not ended"):
        client.batch_results(batch_id)
    ended = client.wait_for_batch(batch_id, poll_interval=0.05, timeout=5)
    assert ended.ended and (ended.succeeded, ended.errored) == (2, 1)

    results = client.batch_results(batch_id)
    text, structured, invalid = results["text"], results["structured"], results["invalid"]
    assert isinstance(text, CallResult) and isinstance(structured, CallResult)
    assert text.text == "plain" and text.batch and text.requested_model == MODEL
    assert text.model == "claude-haiku-4-5-20251001"
    standard = pricing.cost_usd(text.model, text.message["usage"])
    assert standard is not None and text.cost_usd == pytest.approx(standard / 2)
    assert structured.json == TICKET
    assert isinstance(invalid, CallError) and (invalid.kind, invalid.status) == ("bad_request", 400)

    # another client (another process, say) passes the requests to get the same results
    again = client_for(server).batch_results(batch_id, requests=dict(items))
    rebuilt = again["structured"]
    assert isinstance(rebuilt, CallResult)
    assert rebuilt == structured.model_copy(update={"latency_s": rebuilt.latency_s})


class _ErrorHandler(http.server.BaseHTTPRequestHandler):
    """Answers every request with the API error named by its model: ``"<error type>:<status>"``."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        error_type, status = body["model"].split(":")
        payload = json.dumps({"type": "error", "error": {"type": error_type, "message": "no"}}).encode()
        self.send_response(int(status))
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", "req_error")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


API_ERROR_TYPES = [
    ("invalid_request_error", 400),
    ("authentication_error", 401),
    ("billing_error", 402),
    ("permission_error", 403),
    ("not_found_error", 404),
    ("request_too_large", 413),
    ("rate_limit_error", 429),
    ("api_error", 500),
    ("timeout_error", 504),
    ("overloaded_error", 529),
]


def test_batch_item_errors_are_classified_as_on_a_direct_call() -> None:
    """An errored batch item gets the kind and status that the same error gets from a direct call."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ErrorHandler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        client = Client(
            api_key=API_KEY, base_url=f"http://127.0.0.1:{httpd.server_address[1]}", max_retries=0
        )
        _open_clients.append(client)
        for error_type, status in API_ERROR_TYPES:
            with pytest.raises(CallError) as caught:
                client.create(ask(model=f"{error_type}:{status}"))
            direct = caught.value
            assert direct.status == status
            assert _errored_kind(error_type) == (direct.kind, direct.status), error_type
    finally:
        httpd.shutdown()
        httpd.server_close()
    for unknown in ("some_future_error", None):  # never retried: trying again could pay twice
        assert not CallError(*_errored_kind(unknown)).retryable


def test_cancel_batch(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(batch_delay=60)
    client = client_for(server)
    batch_id = client.submit_batch([(f"item-{i}", ask(f"q{i}")) for i in range(2)])
    assert client.cancel_batch(batch_id).processing_status == "canceling"
    assert client.batch_status(batch_id).canceled == 2
    results = client.batch_results(batch_id)
    assert {r.kind for r in results.values() if isinstance(r, CallError)} == {"canceled"}
    assert len(results) == 2


def test_submit_batch_checks_its_items(anthropic_server: LocalAnthropicServer) -> None:
    client = client_for(anthropic_server)
    with pytest.raises(ValueError, match="duplicate"):
        client.submit_batch([("a", ask()), ("a", ask())])
    with pytest.raises(ValueError):
        client.submit_batch([])
    assert anthropic_server.requests == []


# ---- prices ----------------------------------------------------------------------------------------------------


def test_price_table() -> None:
    assert pricing.PRICES_AS_OF == "2026-11-01"
    for dated, alias, rates in [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", (3.0, 15.0)),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5", (1.0, 5.0)),
        ("claude-opus-4-5-20251101", "claude-opus-4-5", (5.0, 25.0)),
    ]:
        price = pricing.DEFAULT_PRICES[dated]
        assert pricing.DEFAULT_PRICES[alias] == price
        assert (price.input, price.output) == rates
        assert price.cache_write == pytest.approx(rates[0] * 1.25)
        assert price.cache_read == pytest.approx(rates[0] * 0.1)


def test_cost_usd() -> None:
    usage = {
        "input_tokens": 1_000_000,
        "output_tokens": 1_000_000,
        "cache_creation_input_tokens": 1_000_000,
        "cache_read_input_tokens": 1_000_000,
    }
    assert pricing.cost_usd("claude-opus-4-5", usage) == pytest.approx(5 + 25 + 6.25 + 0.5)
    assert pricing.cost_usd("claude-opus-4-5", usage, batch=True) == pytest.approx((5 + 25 + 6.25 + 0.5) / 2)
    assert pricing.cost_usd("claude-haiku-4-5", {"input_tokens": 0, "output_tokens": 0}) == 0.0
    assert pricing.cost_usd("claude-haiku-4-5", {"input_tokens": 10, "output_tokens": None}) == pytest.approx(
        1e-5
    )
    one_hour = {
        "cache_creation_input_tokens": 1_000_000,
        "cache_creation": {"ephemeral_1h_input_tokens": 1_000_000},
    }
    assert pricing.cost_usd("claude-sonnet-4-5", one_hour) == pytest.approx(6.0)
    assert pricing.cost_usd("gpt-unknown", usage) is None
    assert pricing.cost_usd(None, usage) is None


def test_price_files_and_the_environment_variable(
    tmp_path: Path, anthropic_server: LocalAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    json_file = tmp_path / "prices.json"
    json_file.write_text(
        json.dumps({"as_of": "2026-12-01", "models": {"house-model": {"input": 2, "output": 8}}})
    )
    toml_file = tmp_path / "prices.toml"
    toml_file.write_text("[models.claude-haiku-4-5]\ninput = 2.0\noutput = 10.0\ncache_read = 0.5\n")

    from_json = pricing.load_prices(json_file)
    assert from_json["house-model"] == pricing.ModelPrice.from_rates(2, 8)
    assert from_json["claude-opus-4-5"] == pricing.DEFAULT_PRICES["claude-opus-4-5"]
    from_toml = pricing.load_prices(toml_file)
    assert (from_toml["claude-haiku-4-5"].output, from_toml["claude-haiku-4-5"].cache_read) == (10.0, 0.5)
    assert from_toml["claude-haiku-4-5-20251001"] == from_toml["claude-haiku-4-5"]  # the alias's dated id too
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"m": {"input": -1, "output": 1}}))
    with pytest.raises(ValueError, match="negative"):
        pricing.load_prices(bad)

    request = ask(model="house-model")
    assert client_for(anthropic_server).create(request).cost_usd is None
    monkeypatch.setenv(pricing.PRICES_ENV_VAR, str(json_file))
    priced = client_for(anthropic_server).create(request)
    assert priced.cost_usd == pytest.approx((priced.input_tokens * 2 + priced.output_tokens * 8) / 1e6)
    explicit = client_for(anthropic_server, prices=from_toml).create(ask())
    assert explicit.cost_usd == pytest.approx((explicit.input_tokens * 2 + explicit.output_tokens * 10) / 1e6)


def test_a_price_file_override_of_an_alias_prices_its_dated_ids(
    tmp_path: Path, make_anthropic_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_anthropic_server(models=PINNED_MODEL_IDS, batch_delay=0)
    alias_file = tmp_path / "alias.toml"
    alias_file.write_text("[models.claude-haiku-4-5]\ninput = 2.0\noutput = 10.0\n")
    monkeypatch.setenv(pricing.PRICES_ENV_VAR, str(alias_file))
    client = client_for(server)
    result = client.create(ask())
    assert result.model == "claude-haiku-4-5-20251001"
    assert result.cost_usd == pytest.approx((result.input_tokens * 2 + result.output_tokens * 10) / 1e6)
    batched = client.batch_results(client.submit_batch([("one", ask())]))["one"]
    assert isinstance(batched, CallResult) and batched.model == "claude-haiku-4-5-20251001"
    assert batched.cost_usd == pytest.approx((batched.input_tokens * 2 + batched.output_tokens * 10) / 2e6)
    assert (
        pricing.current_prices()["claude-sonnet-4-5-20250929"] == pricing.DEFAULT_PRICES["claude-sonnet-4-5"]
    )

    # a dated id's own price wins over its alias's; an override of a dated id leaves the alias alone
    both = tmp_path / "both.json"
    both.write_text(
        json.dumps(
            {
                "claude-haiku-4-5": {"input": 2, "output": 10},
                "claude-haiku-4-5-20251001": {"input": 3, "output": 12},
                "claude-opus-4-5-20251101": {"input": 4, "output": 20},
            }
        )
    )
    table = pricing.load_prices(both)
    assert table["claude-haiku-4-5"] == pricing.ModelPrice.from_rates(2, 10)
    assert table["claude-haiku-4-5-20251001"] == pricing.ModelPrice.from_rates(3, 12)
    assert table["claude-opus-4-5-20251101"] == pricing.ModelPrice.from_rates(4, 20)
    assert table["claude-opus-4-5"] == pricing.DEFAULT_PRICES["claude-opus-4-5"]


@pytest.mark.parametrize(
    ("name", "text", "field", "value"),
    [
        ("nan.toml", "[models.house-model]\ninput = nan\noutput = 1.0\n", "input", "nan"),
        ("inf.toml", "[models.house-model]\ninput = 1.0\noutput = inf\n", "output", "inf"),
        ("nan.json", '{"house-model": {"input": 1, "output": 1, "cache_read": NaN}}', "cache_read", "nan"),
        ("huge.json", '{"house-model": {"input": 1, "output": 1e999}}', "output", "inf"),
        ("big.json", '{"house-model": {"input": 1' + "0" * 400 + ', "output": 1}}', "input", "1000"),
        ("negative.toml", "[models.house-model]\ninput = -1.0\noutput = 1.0\n", "input", "-1.0"),
    ],
)
def test_prices_must_be_finite_and_not_negative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, field: str, value: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError) as caught:
        pricing.load_prices(path)
    assert f"{path}: house-model.{field}" in str(caught.value) and value in str(caught.value)
    monkeypatch.setenv(pricing.PRICES_ENV_VAR, str(path))
    with pytest.raises(EvalkitError, match=f"named by {pricing.PRICES_ENV_VAR}.*house-model.{field}"):
        pricing.current_prices()  # as a run checks the file before it starts


@pytest.mark.parametrize(
    "text", ["{not json", "[models.x]\ninput = \n", '{"house-model": {"input": NaN, "output": 1}}']
)
def test_a_bad_price_file_fails_calls_before_they_are_sent(
    tmp_path: Path, make_anthropic_server: MakeServer, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    server = make_anthropic_server(lambda body: TICKET)
    client = client_for(server, max_retries=0)
    batch_id = client.submit_batch([("one", ask())])  # submitted while the prices were fine
    path = tmp_path / "prices"
    path.write_text(text)
    monkeypatch.setenv(pricing.PRICES_ENV_VAR, str(path))
    sent = len(server.requests)

    async def acreate() -> CallResult:
        try:
            return await client.acreate(ask())
        finally:
            await client.aclose()

    for call in (
        lambda: client.create(ask()),
        lambda: client.parse(ask(), Ticket),
        lambda: asyncio.run(acreate()),
        lambda: client.submit_batch([("two", ask())]),
        lambda: client.batch_results(batch_id),
    ):
        with pytest.raises(EvalkitError, match=f"{path} \\(named by {pricing.PRICES_ENV_VAR}\\)"):
            call()
    assert len(server.requests) == sent  # nothing was sent, so nothing was paid for and thrown away
    assert client.count_tokens(ask()) > 0  # a count has no cost to price


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
