"""Message Batches through the client."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any

import pytest
from client_helpers import API_KEY, MODEL, TICKET, MakeServer, Ticket, _open_clients, ask, client_for

from evalkit._client import (
    BatchStatus,
    CallResult,
    Client,
    is_structured,
    structured_request,
)
from evalkit._client import _pricing as pricing
from evalkit._client._client import _errored_kind
from evalkit.errors import CallError
from evalkit.testing import PINNED_MODEL_IDS, LocalAnthropicServer

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
