"""The local Anthropic-compatible server, through the official SDK: authentication and the request log."""

from __future__ import annotations

from typing import Any, cast

import anthropic
import pytest
from server_helpers import (
    API_KEY,
    MODEL,
    MakeServer,
    ask,
    sdk,
    track,
)

from evalkit.testing import LocalAnthropicServer
from evalkit.testing.server import count_input_tokens

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
