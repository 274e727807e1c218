"""The local server's prompt-cache accounting, through the official SDK: what is written, read and left uncached."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from server_helpers import sdk

from evalkit.testing import LocalAnthropicServer
from evalkit.testing.server import count_input_tokens

SONNET = "claude-sonnet-4-6"  # caches prefixes of 1,024 tokens and more
LONG = "Route each ticket to one queue. " * 400  # about 3,200 tokens at four characters a token


def _request(system: Any, question: str = "Where is my parcel?", model: str = SONNET) -> dict[str, Any]:
    return {
        "model": model,
        "max_tokens": 16,
        "system": system,
        "messages": [{"role": "user", "content": question}],
    }


def _marked(text: str = LONG, **control: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral", **control}}]


def _usage(server: LocalAnthropicServer, request: dict[str, Any]) -> dict[str, Any]:
    raw = sdk(server).messages.with_raw_response.create(**request)
    usage: dict[str, Any] = raw.http_response.json()["usage"]
    return usage


def test_the_first_call_writes_the_marked_prefix_and_the_next_reads_it(
    anthropic_server: LocalAnthropicServer,
) -> None:
    first = _usage(anthropic_server, _request(_marked()))
    second = _usage(anthropic_server, _request(_marked(), "My invoice is wrong"))
    total = count_input_tokens(_request(_marked()))
    assert first["cache_creation_input_tokens"] > 1024 and first["cache_read_input_tokens"] == 0
    assert first["input_tokens"] + first["cache_creation_input_tokens"] == total  # nothing counted twice
    assert first["cache_creation"] == {
        "ephemeral_5m_input_tokens": first["cache_creation_input_tokens"],
        "ephemeral_1h_input_tokens": 0,
    }
    # the same prefix is read, and only the question after it is uncached
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["cache_creation_input_tokens"] == 0 and 0 < second["input_tokens"] < 30


def test_no_marker_or_a_prefix_below_the_models_minimum_caches_nothing(
    anthropic_server: LocalAnthropicServer,
) -> None:
    for request in [
        _request(LONG),  # no marker
        _request(_marked("Route each ticket. " * 100)),  # ~475 tokens: below Sonnet's 1,024
        _request(_marked(), model="claude-opus-4-6"),  # ~3,200 tokens: below Opus 4.6's 4,096
        _request(_marked(), model="claude-opus-4-6"),  # ... so not read either
    ]:
        usage = _usage(anthropic_server, request)
        assert usage["cache_creation_input_tokens"] == usage["cache_read_input_tokens"] == 0
        assert usage["input_tokens"] == count_input_tokens(request)


def test_a_changed_prefix_model_or_expired_entry_misses() -> None:
    now = [0.0]
    with LocalAnthropicServer() as server:
        server.prompt_cache._clock = lambda: now[0]
        assert _usage(server, _request(_marked()))["cache_creation_input_tokens"] > 0
        # another system prompt, another model family: their own entries
        assert _usage(server, _request(_marked(LONG + "!")))["cache_read_input_tokens"] == 0
        assert _usage(server, _request(_marked(), model="claude-sonnet-4-5"))["cache_read_input_tokens"] == 0
        now[0] = 299.0  # a read refreshes the 5-minute entry ...
        assert _usage(server, _request(_marked()))["cache_read_input_tokens"] > 0
        now[0] = 299.0 + 299.0
        assert _usage(server, _request(_marked()))["cache_read_input_tokens"] > 0
        now[0] += 301.0  # ... and 5 minutes unused expire it
        assert _usage(server, _request(_marked()))["cache_read_input_tokens"] == 0
        # a 1-hour entry outlives that
        now[0] += 301.0
        assert _usage(server, _request(_marked(ttl="1h")))["cache_creation"]["ephemeral_1h_input_tokens"] > 0
        now[0] += 3000.0
        assert _usage(server, _request(_marked(ttl="1h")))["cache_read_input_tokens"] > 0


def test_tools_and_system_breakpoints_read_the_longest_cached_prefix(
    anthropic_server: LocalAnthropicServer,
) -> None:
    tools = [
        {
            "name": "lookup_order",
            "description": "Finds an order. " * 300,
            "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "cache_control": {"type": "ephemeral"},
        }
    ]
    request = {**_request(_marked()), "tools": tools}
    first = _usage(anthropic_server, request)
    # the tools' prefix was written too: another system prompt after the same tools reads it
    other = _usage(anthropic_server, {**_request(_marked(LONG + "?")), "tools": tools})
    assert 0 < other["cache_read_input_tokens"] < first["cache_creation_input_tokens"]
    again = _usage(anthropic_server, request)
    assert again["cache_read_input_tokens"] == first["cache_creation_input_tokens"]


def test_markers_the_api_refuses_are_refused_alike(anthropic_server: LocalAnthropicServer) -> None:
    five = [{"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks with cache_control"):
        sdk(anthropic_server, max_retries=0).messages.create(**_request(five))
    longer_last = [*_marked("a"), *_marked("b", ttl="1h")]
    with pytest.raises(anthropic.BadRequestError, match="1h cache entry must come before"):
        sdk(anthropic_server, max_retries=0).messages.create(**_request(longer_last))
    with pytest.raises(anthropic.BadRequestError, match="ttl"):
        sdk(anthropic_server, max_retries=0).messages.create(**_request(_marked(ttl="1d")))


def test_batch_items_are_accounted_too(anthropic_server: LocalAnthropicServer) -> None:
    client = sdk(anthropic_server)
    batch = client.messages.batches.create(
        requests=[
            {"custom_id": f"r{i}", "params": _request(_marked(), f"question {i}")}  # type: ignore[typeddict-item]
            for i in range(3)
        ]
    )
    while client.messages.batches.retrieve(batch.id).processing_status != "ended":
        pass
    usages = [r.result.message.usage for r in client.messages.batches.results(batch.id)]  # type: ignore[union-attr]
    assert sum(u.cache_creation_input_tokens or 0 for u in usages) > 0
    assert sum(u.cache_read_input_tokens or 0 for u in usages) > 0  # items after the first read it
