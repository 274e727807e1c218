"""Rate-limit mode: requests and input tokens per minute, answered like the API (429, retry-after, headers)."""

from __future__ import annotations

import argparse
import http.client
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anthropic
import pytest
from server_helpers import API_KEY, ask, sdk

from evalkit.cli import _serve
from evalkit.testing import LocalAnthropicServer, RateLimits

MakeServer = Callable[..., LocalAnthropicServer]
LIMIT_HEADERS = [
    f"anthropic-ratelimit-{kind}-{field}"
    for kind in ("requests", "input-tokens")
    for field in ("limit", "remaining", "reset")
]


class FrozenClock:
    """A monotonic clock that moves only when told: the buckets refill only then."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def post(server: LocalAnthropicServer, text: str = "hi") -> tuple[int, dict[str, str], dict[str, object]]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        body = json.dumps(ask(text)).encode()
        conn.request("POST", "/v1/messages", body, {"content-type": "application/json", "x-api-key": API_KEY})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, json.loads(response.read())
    finally:
        conn.close()


def test_quick_requests_over_the_rpm_get_a_fixed_number_of_429s(make_anthropic_server: MakeServer) -> None:
    clock = FrozenClock()
    server = make_anthropic_server(rate_limits=RateLimits(rpm=120, itpm=1_000_000, clock=clock))

    statuses = [post(server)[0] for _ in range(30)]

    # the bucket holds one second's worth of 120 a minute: 2 requests, and nothing refills on a frozen clock
    assert statuses == [200, 200] + [429] * 28
    assert server.rate_limited == 28
    assert [r.rate_limited for r in server.requests_to("/v1/messages")] == [False, False] + [True] * 28
    clock.now += 0.5  # one more request's worth
    assert post(server)[0] == 200 and post(server)[0] == 429


def test_a_429_has_the_api_error_shape_retry_after_and_parseable_limit_headers(
    make_anthropic_server: MakeServer,
) -> None:
    clock = FrozenClock()
    server = make_anthropic_server(rate_limits=RateLimits(rpm=60, itpm=6000, clock=clock))
    before = datetime.now(UTC).replace(microsecond=0)

    ok_status, ok_headers, _ = post(server)
    status, headers, body = post(server)

    assert (ok_status, status) == (200, 429)
    assert body["type"] == "error" and body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    assert headers["retry-after"] == "1"
    for got in (ok_headers, headers):
        assert all(name in got for name in LIMIT_HEADERS)
        assert got["anthropic-ratelimit-requests-limit"] == "60"
        assert got["anthropic-ratelimit-input-tokens-limit"] == "6000"
        reset = datetime.fromisoformat(got["anthropic-ratelimit-requests-reset"].replace("Z", "+00:00"))
        assert before <= reset <= before + timedelta(seconds=3)
    assert ok_headers["anthropic-ratelimit-requests-remaining"] == "0"
    # 6000 a minute holds 100 tokens; the first request's estimate was taken from them, the refused one's not
    remaining = int(ok_headers["anthropic-ratelimit-input-tokens-remaining"])
    assert 0 < remaining < 100
    assert headers["anthropic-ratelimit-input-tokens-remaining"] == str(remaining)


def test_input_tokens_per_minute_refuse_a_request_the_bucket_cannot_hold(
    make_anthropic_server: MakeServer,
) -> None:
    clock = FrozenClock()
    server = make_anthropic_server(rate_limits=RateLimits(itpm=600, clock=clock))  # holds 10 tokens

    assert post(server, "x")[0] == 200  # a full bucket lets one large request through
    status, headers, _ = post(server, "x")
    assert status == 429 and int(headers["retry-after"]) >= 1
    assert "anthropic-ratelimit-requests-limit" not in headers  # no rpm set: no request headers


def test_every_response_carries_the_limit_headers(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(rate_limits=RateLimits(rpm=100))
    with sdk(server) as client:
        raw = client.messages.with_raw_response.count_tokens(
            model="claude-haiku-4-5", messages=[{"role": "user", "content": "hi"}]
        )
    assert raw.headers["anthropic-ratelimit-requests-limit"] == "100"
    assert "anthropic-ratelimit-requests-limit" not in dict(post(make_anthropic_server())[1])


def test_a_client_honouring_retry_after_gets_every_request_answered(
    make_anthropic_server: MakeServer,
) -> None:
    server = make_anthropic_server(rate_limits=RateLimits(rpm=600))  # 10 at once, then 10 a second
    client = sdk(server, max_retries=8)

    replies = [client.messages.create(**ask(f"question {i}")) for i in range(14)]

    assert len(replies) == 14
    assert server.rate_limited >= 1  # some were refused and retried after the advertised wait
    answered = [r for r in server.requests_to("/v1/messages") if r.status == 200]
    assert len(answered) == 14


def test_limits_are_set_from_the_command_line_or_the_rules_file_and_checked(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser(prog="evalkit")
    _serve.add_parser(parser.add_subparsers())
    args = parser.parse_args(["serve", "--port", "0", "--rpm", "50", "--itpm", "30000"])
    limits = _serve.build_server(args).rate_limits
    assert (limits.rpm, limits.itpm) == (50, 30000)
    rules = tmp_path / "rules.toml"
    rules.write_text("[limits]\nrpm = 40\nitpm = 9000\n", encoding="utf-8")
    args = parser.parse_args(["serve", "--port", "0", "--rules", str(rules), "--rpm", "45"])
    limits = _serve.build_server(args).rate_limits
    assert (limits.rpm, limits.itpm) == (45, 9000)
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--rpm", "0"])
    with pytest.raises(ValueError, match="rpm: must be a whole number above 0"):
        RateLimits(rpm=0)


def test_the_sdk_sees_a_rate_limit_error(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(rate_limits=RateLimits(rpm=60, clock=FrozenClock()))
    client = sdk(server)
    client.messages.create(**ask("first"))
    with pytest.raises(anthropic.RateLimitError) as caught:
        client.messages.create(**ask("second"))
    assert caught.value.response.headers["retry-after"] == "1"
