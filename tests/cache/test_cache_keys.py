"""Cache keys: stable, credential-free, pinned."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import (
    ENDPOINT,
    META,
    PINNED_KEYS,
    PINNED_REQUESTS,
    SECRET,
    make_request,
    store,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit._cache import (
    CACHE_FORMAT_VERSION,
    MESSAGES_ENDPOINT,
    ResponseCache,
    cache_key,
    sanitize_request,
)

# ------------------------------------------------------------------------------------------------ keys

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


def reorder(value: Any, rng: random.Random) -> Any:
    """The same JSON value with every object's keys in a shuffled insertion order."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: reorder(v, rng) for k, v in items}
    if isinstance(value, list):
        return [reorder(v, rng) for v in value]
    return value


@settings(max_examples=75, deadline=None)
@given(
    request=st.dictionaries(st.text(max_size=6), json_values, max_size=6),
    seed=st.integers(),
    repeat=st.integers(0, 5),
)
def test_key_is_stable_under_dict_key_order(request: dict[str, Any], seed: int, repeat: int) -> None:
    shuffled = reorder(request, random.Random(seed))
    assert cache_key(ENDPOINT, shuffled, repeat) == cache_key(ENDPOINT, request, repeat)


def test_key_is_sha256_hex_and_pinned() -> None:
    key = cache_key(ENDPOINT, {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]})
    assert len(key) == 64 and all(c in "0123456789abcdef" for c in key)
    # Pinned: if this changes, every committed cache is invalidated, so CACHE_FORMAT_VERSION must be bumped.
    assert CACHE_FORMAT_VERSION == 1
    assert key == "e565837d9bb77241c76b25616acd073fe6a1f2bdf4a93873d0e7067b80982631"
    document = {
        "endpoint": "messages",
        "format": 1,
        "repeat": 0,
        "request": {"messages": [{"content": "hi", "role": "user"}], "model": "claude-sonnet-4-5"},
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert key == hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("change", "repeat"),
    [
        ({"model": "claude-haiku-4-5"}, 0),
        ({"system": "You are a different assistant."}, 0),
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": "My invoice is right"}]}]}, 0),
        ({"temperature": 1.0}, 0),
        ({"max_tokens": 513}, 0),
        ({"thinking": {"type": "enabled", "budget_tokens": 2048}}, 0),
        ({"tools": [{"name": "lookup", "input_schema": {"type": "object"}}]}, 0),
        (
            {
                "output_config": {
                    "format": {
                        "type": "json_schema",
                        "schema": {"type": "object", "properties": {"label": {"enum": ["a", "b"]}}},
                    }
                }
            },
            0,
        ),
        ({}, 1),
    ],
    ids=["model", "system", "messages", "temperature", "max_tokens", "thinking", "tools", "schema", "repeat"],
)
def test_key_changes_with_anything_that_shapes_the_response(change: dict[str, Any], repeat: int) -> None:
    base = cache_key(ENDPOINT, make_request())
    assert cache_key(ENDPOINT, make_request(**change), repeat) != base


def test_key_changes_with_endpoint() -> None:
    assert cache_key("messages", make_request()) != cache_key("judge", make_request())


def test_key_rejects_bad_identity_and_non_json() -> None:
    with pytest.raises(TypeError):
        cache_key("", make_request())
    with pytest.raises(TypeError):
        cache_key(ENDPOINT, make_request(), -1)
    with pytest.raises(TypeError):
        cache_key(ENDPOINT, make_request(), True)
    with pytest.raises(TypeError):
        cache_key(ENDPOINT, ["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        cache_key(ENDPOINT, make_request(temperature=object()))
    with pytest.raises(ValueError):
        cache_key(ENDPOINT, make_request(temperature=float("nan")))


SECRET_FIELDS: dict[str, Any] = {
    "api_key": SECRET,
    "x-api-key": SECRET,
    "Authorization": f"Bearer {SECRET}",
    "extra_headers": {"x-api-key": SECRET, "anthropic-beta": "x"},
    "headers": {"Authorization": f"Bearer {SECRET}"},
    "default_headers": {"X-Api-Key": SECRET},
}


@pytest.mark.parametrize("name", list(SECRET_FIELDS))
def test_secret_fields_never_reach_the_key(name: str) -> None:
    assert cache_key(ENDPOINT, make_request(**{name: SECRET_FIELDS[name]})) == cache_key(
        ENDPOINT, make_request()
    )


@settings(max_examples=30, deadline=None)
@given(secret=st.text(min_size=1, max_size=40))
def test_any_api_key_value_gives_the_same_key(secret: str) -> None:
    assert cache_key(ENDPOINT, make_request(api_key=secret)) == cache_key(ENDPOINT, make_request())


def test_secret_fields_never_reach_the_file(cache: ResponseCache) -> None:
    request = make_request(
        **SECRET_FIELDS,
        extra_body={"metadata": {"user_id": "u-1", "api_key": SECRET}},
    )
    meta = {**META, "authorization": SECRET}
    key = store(cache, request, meta=meta)
    text = cache.path_for(key).read_text(encoding="utf-8")
    assert SECRET not in text
    assert "u-1" in text  # the rest of the request is kept
    assert key == cache_key(ENDPOINT, make_request(extra_body={"metadata": {"user_id": "u-1"}}))


def test_sanitize_keeps_schema_properties_named_like_secrets_and_does_not_mutate() -> None:
    tool = {
        "name": "login",
        "input_schema": {"type": "object", "properties": {"api_key": {"type": "string"}}},
    }
    request = make_request(tools=[tool], api_key=SECRET)
    before = json.dumps(request, sort_keys=True)
    clean = sanitize_request(request)
    assert "api_key" not in clean
    assert clean["tools"][0]["input_schema"]["properties"] == {"api_key": {"type": "string"}}
    assert json.dumps(request, sort_keys=True) == before
    assert sanitize_request(clean) == clean


# ------------------------------------------------------------------------------------------------ review fixes


@pytest.mark.parametrize(("name", "repeat"), list(PINNED_KEYS))
def test_keys_of_ordinary_requests_are_pinned(name: str, repeat: int) -> None:
    assert CACHE_FORMAT_VERSION == 1
    request = PINNED_REQUESTS[name]
    assert cache_key(MESSAGES_ENDPOINT, request, repeat) == PINNED_KEYS[name, repeat]
    # credentials at the top level still never reach the key
    with_secrets = {**request, "api_key": SECRET, "extra_headers": {"x-api-key": SECRET}}
    assert cache_key(MESSAGES_ENDPOINT, with_secrets, repeat) == PINNED_KEYS[name, repeat]


def _tool_use_request(tool_input: dict[str, Any]) -> dict[str, Any]:
    messages = [
        {"role": "user", "content": "Bake something"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "bake", "input": tool_input}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]},
    ]
    return make_request(messages=messages)


def test_secret_named_tool_inputs_are_part_of_the_key_and_the_file(cache: ResponseCache) -> None:
    oatmeal = _tool_use_request({"cookie": "oatmeal"})
    chocolate = _tool_use_request({"cookie": "chocolate chip"})
    assert cache_key(ENDPOINT, oatmeal) != cache_key(ENDPOINT, chocolate)
    key = store(cache, oatmeal)
    assert cache.get(cache_key(ENDPOINT, chocolate)) is None  # not the oatmeal cookie's response
    entry = cache.get(key)
    assert entry is not None
    assert entry.request["messages"][1]["content"][0]["input"] == {"cookie": "oatmeal"}
    # nor anywhere else in the conversation, system text or tools
    for change in (
        {"system": {"type": "text", "text": "x", "password": "hunter2"}},
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "token": "abc"}]}]},
    ):
        assert sanitize_request(make_request(**change)) == make_request(**change)


def test_schema_properties_named_like_secrets_are_kept_whatever_their_value() -> None:
    schema = {"type": "object", "properties": {"api_key": False, "label": {"type": "string"}}}
    tool = {"name": "login", "input_schema": schema}
    output_config = {"format": {"type": "json_schema", "schema": schema}}
    request = make_request(tools=[tool], output_config=output_config)
    clean = sanitize_request(request)
    assert clean["tools"][0]["input_schema"]["properties"]["api_key"] is False
    assert clean["output_config"]["format"]["schema"]["properties"]["api_key"] is False
    without = {"type": "object", "properties": {"label": {"type": "string"}}}
    assert cache_key(ENDPOINT, request) != cache_key(
        ENDPOINT,
        make_request(
            tools=[{"name": "login", "input_schema": without}],
            output_config={"format": {"type": "json_schema", "schema": without}},
        ),
    )


@pytest.mark.parametrize(
    "name",
    ["anthropic_auth_token", "api_token", "password", "token", "auth_token", "Cookie", "client_secret"],
)
def test_more_top_level_credentials_never_reach_the_key_or_the_file(cache: ResponseCache, name: str) -> None:
    request = make_request(**{name: SECRET})
    assert cache_key(ENDPOINT, request) == cache_key(ENDPOINT, make_request())
    key = store(cache, request)
    assert SECRET not in cache.path_for(key).read_text(encoding="utf-8")


def test_mcp_server_authorization_tokens_never_reach_the_key_or_the_file(cache: ResponseCache) -> None:
    def request(**server: Any) -> dict[str, Any]:
        base = {"type": "url", "url": "https://mcp.example.com/sse", "name": "example"}
        return make_request(mcp_servers=[{**base, **server}])

    with_token = request(authorization_token=SECRET)
    assert cache_key(ENDPOINT, with_token) == cache_key(ENDPOINT, request())
    assert cache_key(ENDPOINT, request(name="other")) != cache_key(ENDPOINT, request())
    key = store(cache, with_token)
    text = cache.path_for(key).read_text(encoding="utf-8")
    assert SECRET not in text and "https://mcp.example.com/sse" in text


@pytest.mark.parametrize(("name", "as_int", "as_float"), [("temperature", 0, 0.0), ("top_p", 1, 1.0)])
def test_int_and_float_sampling_parameters_share_a_key(
    cache: ResponseCache, name: str, as_int: int, as_float: float
) -> None:
    recorded = make_request(**{name: as_float})  # as a suite's TOML loads it
    key = store(cache, recorded)
    asked = make_request(**{name: as_int})  # as ClaudeSystem(temperature=0) builds it
    assert cache_key(ENDPOINT, asked) == key
    assert cache.get(cache_key(ENDPOINT, asked)) is not None
    assert cache_key(ENDPOINT, make_request(**{name: 0.5})) != key  # other values still differ
    assert cache_key(ENDPOINT, make_request(max_tokens=512)) == cache_key(ENDPOINT, make_request())
    assert PINNED_KEYS["system", 0] == cache_key(
        MESSAGES_ENDPOINT, {**PINNED_REQUESTS["system"], "temperature": 0}
    )


def test_secret_named_strings_elsewhere_in_a_request_never_reach_the_key_or_the_file(tmp_path: Path) -> None:
    """Outside messages, system text and schemas, a credential-named string is stripped at any depth."""
    base = {"model": "claude-sonnet-4-6", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    tool = {
        "name": "lookup",
        "input_schema": {"type": "object", "properties": {"api_key": {"type": "string"}}},
    }
    with_secrets = base | {
        "tools": [tool | {"api_key": "sk-tool-secret-1234"}],
        "extra_body": {"vendor": {"api_key": "sk-vendor-secret-5678"}},
    }
    without = base | {"tools": [tool], "extra_body": {"vendor": {}}}
    assert cache_key(MESSAGES_ENDPOINT, with_secrets) == cache_key(MESSAGES_ENDPOINT, without)
    sanitized = sanitize_request(with_secrets)
    assert "secret" not in json.dumps(sanitized)
    assert sanitized["tools"][0]["input_schema"]["properties"] == {"api_key": {"type": "string"}}
