"""The local Anthropic-compatible server, through the official SDK: the message batches endpoints."""

from __future__ import annotations

import time
from typing import Any, cast

import anthropic
import pytest
from server_helpers import (
    MODEL,
    MakeServer,
    ask,
    first_text,
    sdk,
)

from evalkit.testing import PINNED_MODEL_IDS, LocalAnthropicServer

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
