"""Credentials, error kinds, scrubbing, faults and retries."""

from __future__ import annotations

import asyncio
import http.server
import json
import pickle
import threading
from pathlib import Path
from typing import Any

import pytest
from client_helpers import API_KEY, MakeServer, Ticket, _open_clients, ask, client_for

from evalkit._client import (
    CallResult,
    Client,
)
from evalkit.errors import CallError
from evalkit.testing import FaultPlan, LocalAnthropicServer

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
        # rate_limit_wait=0: a 429 spends the SDK's retries at once (by default it is waited out first)
        client_for(server, max_retries=1, timeout=0.3, rate_limit_wait=0).create(ask())

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


# ---- credentials in the base URL -------------------------------------------------------------------------------

URL_PASSWORD = "hunter2-pass"


class _EchoingProxy(http.server.BaseHTTPRequestHandler):
    """A gateway that fails every call with a message showing the URL it was given, credentials and all."""

    shown_url = ""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        message = f"upstream {self.shown_url}/v1/messages refused the call"
        payload = json.dumps({"type": "error", "error": {"type": "api_error", "message": message}}).encode()
        self.send_response(502)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("source", ["argument", "environment"])
def test_a_password_in_the_base_url_is_never_shown(monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoingProxy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://alice:{URL_PASSWORD}@127.0.0.1:{server.server_address[1]}"
        _EchoingProxy.shown_url = url
        if source == "environment":
            monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
            client = Client(api_key=API_KEY, max_retries=0)
        else:
            client = Client(api_key=API_KEY, base_url=url, max_retries=0)
        with client, pytest.raises(CallError) as info:
            client.create(ask())
        assert info.value.status == 502 and "refused the call" in str(info.value)
        for shown in (str(info.value), info.value.message, repr(client)):
            assert URL_PASSWORD not in shown and "alice" not in shown
        assert "[redacted]@127.0.0.1" in str(info.value)
        if source == "argument":
            assert "[redacted]@127.0.0.1" in repr(client)
    finally:
        server.shutdown()
        server.server_close()


def test_redact_url_removes_any_user_info() -> None:
    from evalkit._client import redact_url

    assert redact_url(None) is None
    assert redact_url("http://127.0.0.1:8765") == "http://127.0.0.1:8765"
    assert redact_url("https://u:p@proxy.example/v1?q=1") == "https://[redacted]@proxy.example/v1?q=1"
    assert redact_url("https://token@proxy.example") == "https://[redacted]@proxy.example"
    assert redact_url("http://alice:p@ss@[bad") == "http://[redacted]@[bad"  # malformed, still scrubbed
    assert (
        redact_url("https://proxy.example/a@b") == "https://proxy.example/a@b"
    )  # an @ in the path is no user
