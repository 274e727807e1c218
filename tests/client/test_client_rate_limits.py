"""The client against the local server's rate limits: paced by the headers, 429s waited out, never an error."""

from __future__ import annotations

import itertools
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from client_helpers import MakeServer, ask, client_for

from evalkit._client._limiter import RateLimiter, retry_after_s
from evalkit.errors import CallError
from evalkit.testing.server import FaultPlan, RateLimits


def _send_all(client: Any, n: int, threads: int) -> tuple[list[Any], float]:
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = list(pool.map(lambda i: client.create(ask(f"question {i}")), range(n)))
    return results, time.monotonic() - started


def test_a_burst_over_the_limit_finishes_without_errors_and_few_429s(
    make_anthropic_server: MakeServer,
) -> None:
    # 600 a minute: a bucket of 10 requests, refilled at 10 a second
    server = make_anthropic_server(rate_limits=RateLimits(rpm=600), latency=0.05)
    client = client_for(server, max_concurrency=20, max_retries=0)  # no SDK retry to fall back on
    results, elapsed = _send_all(client, 50, threads=20)

    assert len(results) == 50 and all(r.text == server.text for r in results)
    # the first wave finds 10 in the bucket and 10 refused; after that the calls are paced, not refused
    refused = server.rate_limited
    assert 1 <= refused <= 20, refused
    assert client.limiter.stats.rate_limited == refused
    ideal = (50 - 10) / 10  # what the refill allows after the first bucket
    assert ideal * 0.9 <= elapsed <= ideal * 1.35 + 1.5, elapsed


def test_two_clients_with_half_shares_keep_to_the_limit_together(make_anthropic_server: MakeServer) -> None:
    """As two worker processes of one run: each paces to its share, so the 429s stay as few as for one."""
    server = make_anthropic_server(rate_limits=RateLimits(rpm=600), latency=0.05)
    clients = [client_for(server, max_concurrency=10, max_retries=0, rate_limit_share=0.5) for _ in range(2)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda c: _send_all(c, 25, threads=10), clients))
    assert all(len(results) == 25 for results, _ in outcomes)
    assert server.rate_limited <= 20, server.rate_limited
    assert max(elapsed for _, elapsed in outcomes) <= 4.0 * 1.35 + 1.5


def test_the_client_recovers_once_the_limit_lifts(make_anthropic_server: MakeServer) -> None:
    # the server's buckets refill by this clock: speeding it up lifts the limit without restarting anything
    speed = [1.0]
    base = time.monotonic()
    clock = [base, base]  # real time and server time at the last change of speed

    def server_clock() -> float:
        now = time.monotonic()
        return clock[1] + (now - clock[0]) * speed[0]

    server = make_anthropic_server(rate_limits=RateLimits(rpm=600, clock=server_clock), latency=0.05)
    client = client_for(server, max_concurrency=20, max_retries=0)
    _send_all(client, 30, threads=20)
    assert server.rate_limited > 0
    assert client.limiter.window < 20  # it backed off

    clock[1], clock[0], speed[0] = server_clock(), time.monotonic(), 10_000.0  # lifted
    refused = server.rate_limited
    results, elapsed = _send_all(client, 200, threads=20)
    assert len(results) == 200
    assert server.rate_limited == refused  # no 429 once lifted
    # 200 calls of 50 ms, 20 at a time, are 0.5 s: the window grew back rather than staying halved
    assert elapsed < 2.5, elapsed
    assert client.limiter.window == 20


def test_429s_do_not_spend_the_retries(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(
        faults={0: "rate_limit", 1: "rate_limit", 2: "rate_limit"}, retry_after=0.1
    )
    result = client_for(server, max_retries=0).create(ask())
    assert result.text == server.text
    statuses = [r.status for r in server.requests]
    assert statuses == [429, 429, 429, 200]
    starts = [r.started_at for r in server.requests]
    assert all(b - a >= 0.1 for a, b in itertools.pairwise(starts))  # each waited its retry-after


def test_the_waits_on_429_are_bounded(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(faults=FaultPlan(rate=1.0, kinds=["rate_limit"]), retry_after=0.1)
    client = client_for(server, max_retries=1, rate_limit_wait=0.5)
    started = time.monotonic()
    with pytest.raises(CallError) as caught:
        client.create(ask())
    elapsed = time.monotonic() - started
    assert (caught.value.kind, caught.value.status) == ("rate_limit", 429)
    # about 0.5 s of waits, then the SDK's one retry (after its own wait of retry-after)
    assert 0.5 - 0.15 <= elapsed <= 2.0, elapsed
    assert 4 <= len(server.requests) <= 8, len(server.requests)
    # the next call has a budget of its own
    server.faults = FaultPlan(schedule={})
    assert client.create(ask()).text == server.text


def test_a_runner_in_worker_processes_under_a_rate_limit_has_no_error_results(
    tmp_path: Path, make_anthropic_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit._runner import Runner, RunOptions
    from evalkit._systems import load_system
    from evalkit.suite import load_suite

    n = 40
    root = tmp_path / "suite"
    root.mkdir()
    lines = [
        json.dumps({"id": f"c{i}", "input": f"n {i}", "checks": [{"kind": "exact", "expected": "ok"}]})
        for i in range(n)
    ]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "suite.toml").write_text(
        'name = "limited"\n\n[model]\nname = "claude-haiku-4-5"\n', encoding="utf-8"
    )
    (root / "prompt.md").write_text("Answer ok.\n", encoding="utf-8")
    server = make_anthropic_server(rate_limits=RateLimits(rpm=600), latency=0.05, text="ok")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    suite = load_suite(root)
    options = RunOptions(
        concurrency=10, processes=2, max_retries=0, progress=False, judge="off", cache_dir=tmp_path / "cache"
    )
    options.out_root = tmp_path / "runs"
    runner = Runner(suite, load_system("claude", suite), options)
    assert runner.context.processes() == 2
    started = time.monotonic()
    outcome = runner.run()
    elapsed = time.monotonic() - started
    assert outcome.totals.done == n and outcome.totals.errors == 0
    assert server.rate_limited <= 20, server.rate_limited
    assert elapsed <= (n - 10) / 10 * 1.35 + 2.5, elapsed


def test_retry_after_headers() -> None:
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"retry-after-ms": "150", "retry-after": "1"}) == pytest.approx(0.15)
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None


def test_the_limiter_paces_by_the_remaining_header() -> None:
    now = [0.0]
    limiter = RateLimiter(max_concurrency=4, clock=lambda: now[0])
    ticket = limiter.acquire(10)
    headers = {"anthropic-ratelimit-requests-limit": "60", "anthropic-ratelimit-requests-remaining": "0"}
    assert limiter.release(ticket, 200, headers) is None
    # none left, refilled at one a second (at the 0.95 margin): the next call waits about a second
    waits: list[float] = []

    def wait(timeout: float | None = None) -> bool:
        waits.append(timeout or 0.0)
        now[0] += timeout or 0.0
        return False

    limiter._cond.wait = wait  # type: ignore[method-assign]
    limiter.acquire(10)
    assert sum(waits) == pytest.approx(1 / 0.95, rel=0.01)
