"""Tests for the content-addressed response cache."""

from __future__ import annotations

import hashlib
import json
import os
import random
import stat
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.cache import (
    CACHE_DIR_ENV,
    CACHE_FORMAT_VERSION,
    MESSAGES_ENDPOINT,
    CacheEntry,
    CacheError,
    CacheMiss,
    CacheMode,
    CorruptCacheEntry,
    CorruptCacheEntryWarning,
    ResponseCache,
    cache_key,
    prune,
    sanitize_request,
    scan,
)
from evalkit.cache import _cache as cache_module

ENDPOINT = "messages"
SECRET = "sk-ant-api03-DO-NOT-STORE-0123456789"


def make_request(**overrides: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "system": "You are a support triage assistant. Answer with one label.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "My invoice is wrong"}]}],
        "temperature": 0.0,
        "output_config": {
            "format": {
                "type": "json_schema",
                "schema": {"type": "object", "properties": {"label": {"type": "string"}}},
            }
        },
    }
    request.update(overrides)
    return request


def make_response(text: str = '{"label": "billing"}') -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 120, "output_tokens": 8},
    }


META = {"input_tokens": 120, "output_tokens": 8, "cost_usd": 0.0005}


def store(cache: ResponseCache, request: dict[str, Any] | None = None, repeat: int = 0, **kw: Any) -> str:
    request = make_request() if request is None else request
    key = cache_key(ENDPOINT, request, repeat)
    cache.put(key, ENDPOINT, request, repeat, kw.get("response", make_response()), kw.get("meta", META))
    return key


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


@pytest.fixture
def cache(tmp_path: Path) -> ResponseCache:
    return ResponseCache(tmp_path / "cache")


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


# ------------------------------------------------------------------------------------------------ files


def test_round_trip_and_file_format(cache: ResponseCache) -> None:
    request = make_request(system="Réponds en français — ok? 日本語")
    key = store(cache, request, repeat=2)
    path = cache.path_for(key)
    assert path == cache.directory / key[:2] / f"{key}.json"
    assert path.is_file()

    entry = cache.get(key)
    assert isinstance(entry, CacheEntry)
    assert (entry.key, entry.endpoint, entry.repeat, entry.path) == (key, ENDPOINT, 2, path)
    assert entry.request == request
    assert entry.response == make_response()
    assert entry.model == "claude-sonnet-4-5"
    assert (entry.input_tokens, entry.output_tokens, entry.cost_usd) == (120, 8, 0.0005)
    assert entry.created_at is not None
    assert abs(entry.created_at - datetime.now(UTC)) < timedelta(minutes=5)

    raw = path.read_bytes()
    data = json.loads(raw)
    assert set(data) == {"format", "key", "endpoint", "repeat", "request", "response", "meta"}
    assert data["format"] == CACHE_FORMAT_VERSION and data["key"] == key
    assert set(data["meta"]) >= {"created_at", "model", "input_tokens", "output_tokens", "cost_usd"}
    # Pretty, sorted, UTF-8 (not \u escapes), newline-terminated: readable and diffable.
    expected = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert raw.decode("utf-8") == expected
    assert "日本語" in raw.decode("utf-8")


def test_meta_defaults_and_caller_meta_wins(cache: ResponseCache) -> None:
    key = store(cache, meta={"model": "claude-sonnet-4-5-20250929", "latency_ms": 900})
    entry = cache.get(key)
    assert entry is not None
    assert entry.meta["model"] == "claude-sonnet-4-5-20250929"
    assert entry.meta["latency_ms"] == 900
    assert "created_at" in entry.meta
    assert entry.cost_usd is None


def test_put_rejects_a_key_that_does_not_match_the_request(cache: ResponseCache) -> None:
    wrong = cache_key(ENDPOINT, make_request(), repeat=1)
    with pytest.raises(ValueError, match="does not match"):
        cache.put(wrong, ENDPOINT, make_request(), 0, make_response(), META)
    with pytest.raises(ValueError, match="None"):
        cache.put(cache_key(ENDPOINT, make_request()), ENDPOINT, make_request(), 0, None, META)
    assert not cache.directory.exists()


@pytest.mark.parametrize("bad", ["", "abc", "../" + "0" * 61, "A" * 64, "g" * 64])
def test_path_for_rejects_non_keys(cache: ResponseCache, bad: str) -> None:
    with pytest.raises(ValueError):
        cache.path_for(bad)
    with pytest.raises(ValueError):
        cache.get(bad)


# ------------------------------------------------------------------------------------------------ location


def test_default_directory_is_under_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert ResponseCache().directory == tmp_path / ".evalkit" / "cache"


def test_env_var_overrides_default_and_argument_overrides_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "from-env"))
    assert ResponseCache().directory == tmp_path / "from-env"
    assert ResponseCache(tmp_path / "from-arg").directory == tmp_path / "from-arg"
    assert ResponseCache("relative").directory == tmp_path / "relative"
    monkeypatch.setenv(CACHE_DIR_ENV, "")
    assert ResponseCache().directory == tmp_path / ".evalkit" / "cache"


# ------------------------------------------------------------------------------------------------ modes


def test_readwrite_misses_then_hits(cache: ResponseCache) -> None:
    assert cache.mode is CacheMode.READWRITE
    key = cache_key(ENDPOINT, make_request())
    assert cache.get(key) is None
    store(cache)
    assert cache.get(key) is not None
    s = cache.stats
    assert (s.hits, s.misses, s.writes, s.corrupt) == (1, 1, 1, 0)
    assert s.hit_rate == 0.5


def test_replay_reads_hits_and_never_writes(tmp_path: Path) -> None:
    key = store(ResponseCache(tmp_path))
    replay = ResponseCache(tmp_path, mode="replay")
    entry = replay.get(key)
    assert entry is not None and entry.response == make_response()
    other = make_request(temperature=0.5)
    other_key = cache_key(ENDPOINT, other)
    replay.put(other_key, ENDPOINT, other, 0, make_response(), META)
    assert not replay.path_for(other_key).exists()
    assert replay.stats.writes == 0


def test_replay_miss_names_the_label_and_the_fix(tmp_path: Path) -> None:
    replay = ResponseCache(tmp_path, mode=CacheMode.REPLAY)
    key = cache_key(ENDPOINT, make_request())
    with pytest.raises(CacheMiss) as info:
        replay.get(key, label="support-triage/tri-007 (judge)")
    message = str(info.value)
    assert "support-triage/tri-007 (judge)" in message
    assert "readwrite" in message and "commit" in message
    assert str(tmp_path) in message
    assert info.value.key == key and info.value.label == "support-triage/tri-007 (judge)"
    assert isinstance(info.value, CacheError)
    assert replay.stats.misses == 1
    # Without a label the key identifies the request.
    with pytest.raises(CacheMiss, match=key):
        replay.get(key)


def test_refresh_ignores_existing_entries_and_overwrites(tmp_path: Path) -> None:
    key = store(ResponseCache(tmp_path))
    refresh = ResponseCache(tmp_path, mode="refresh")
    assert refresh.get(key) is None
    new_response = make_response('{"label": "account"}')
    store(refresh, response=new_response)
    assert ResponseCache(tmp_path).get(key) is not None
    entry = ResponseCache(tmp_path).get(key)
    assert entry is not None and entry.response == new_response
    assert (refresh.stats.hits, refresh.stats.misses, refresh.stats.writes) == (0, 1, 1)


def test_off_neither_reads_nor_writes(tmp_path: Path) -> None:
    key = store(ResponseCache(tmp_path / "existing"))
    off = ResponseCache(tmp_path / "existing", mode="off")
    assert off.get(key) is None
    fresh = ResponseCache(tmp_path / "never-created", mode="off")
    store(fresh)
    fresh.check_writable()
    assert not (tmp_path / "never-created").exists()
    assert off.stats == fresh.stats == cache_module.CacheStats()


def test_unknown_mode_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="readwrite, replay, refresh, off"):
        ResponseCache(tmp_path, mode="read-only")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ corruption


def _corrupt_not_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text("{ this is not json", encoding="utf-8")


def _corrupt_truncated(path: Path, data: dict[str, Any]) -> None:
    path.write_bytes(path.read_bytes()[:40])


def _corrupt_not_utf8(path: Path, data: dict[str, Any]) -> None:
    path.write_bytes(b"\xff\xfe\x00garbage")


def _corrupt_not_object(path: Path, data: dict[str, Any]) -> None:
    path.write_text("[1, 2, 3]\n", encoding="utf-8")


def _corrupt_wrong_format(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps({**data, "format": CACHE_FORMAT_VERSION + 1}), encoding="utf-8")


def _corrupt_key_field(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps({**data, "key": "0" * 64}), encoding="utf-8")


def _corrupt_missing_response(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps({k: v for k, v in data.items() if k != "response"}), encoding="utf-8")


def _corrupt_edited_request(path: Path, data: dict[str, Any]) -> None:
    path.write_text(
        json.dumps({**data, "request": {**data["request"], "temperature": 0.7}}), encoding="utf-8"
    )


def _corrupt_bad_repeat(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps({**data, "repeat": "zero"}), encoding="utf-8")


def _corrupt_empty(path: Path, data: dict[str, Any]) -> None:
    path.write_bytes(b"")


CORRUPTIONS = {
    "not-json": (_corrupt_not_json, "not valid JSON"),
    "truncated": (_corrupt_truncated, "not valid JSON"),
    "empty": (_corrupt_empty, "not valid JSON"),
    "not-utf8": (_corrupt_not_utf8, "not valid JSON"),
    "not-object": (_corrupt_not_object, "not a JSON object"),
    "wrong-format": (_corrupt_wrong_format, "cache format"),
    "key-mismatch": (_corrupt_key_field, "key mismatch"),
    "edited-request": (_corrupt_edited_request, "key mismatch"),
    "missing-response": (_corrupt_missing_response, "missing response"),
    "bad-repeat": (_corrupt_bad_repeat, "malformed"),
}


@pytest.mark.parametrize("kind", list(CORRUPTIONS))
def test_corrupt_entry_is_reported_treated_as_miss_and_overwritten(cache: ResponseCache, kind: str) -> None:
    corrupt, reason = CORRUPTIONS[kind]
    key = store(cache)
    path = cache.path_for(key)
    corrupt(path, json.loads(path.read_text(encoding="utf-8")))

    with pytest.warns(CorruptCacheEntryWarning) as record:
        assert cache.get(key, label="tri-001") is None
    message = str(record[0].message)
    assert str(path) in message and reason in message and "tri-001" in message
    assert (cache.stats.corrupt, cache.stats.misses, cache.stats.hits) == (1, 1, 0)

    store(cache)  # the caller refetched
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        entry = cache.get(key)
    assert entry is not None and entry.response == make_response()
    assert cache.stats.corrupt == 1 and cache.stats.hits == 1


@pytest.mark.parametrize("kind", ["not-json", "wrong-format", "missing-response"])
def test_corrupt_entry_in_replay_is_an_error_naming_the_file(tmp_path: Path, kind: str) -> None:
    corrupt, reason = CORRUPTIONS[kind]
    key = store(ResponseCache(tmp_path))
    replay = ResponseCache(tmp_path, mode="replay")
    path = replay.path_for(key)
    corrupt(path, json.loads(path.read_text(encoding="utf-8")))
    with pytest.raises(CorruptCacheEntry) as info:
        replay.get(key, label="tri-001")
    assert str(path) in str(info.value) and reason in str(info.value)
    assert info.value.path == path
    assert replay.stats.corrupt == 1


# ------------------------------------------------------------------------------------------------ atomic writes


def test_writes_leave_no_temp_files(cache: ResponseCache) -> None:
    for i in range(5):
        store(cache, make_request(temperature=i / 10))
        store(cache, make_request(temperature=i / 10))  # overwrite
    assert temp_files(cache.directory) == []
    assert len(list(cache.directory.rglob("*.json"))) == 5


def test_unserialisable_response_writes_nothing_and_keeps_old_entry(cache: ResponseCache) -> None:
    key = store(cache)
    before = cache.path_for(key).read_bytes()
    bad = {"content": [{"type": "text", "text": "ok"}], "when": datetime.now(UTC)}
    with pytest.raises(TypeError) as info:
        cache.put(key, ENDPOINT, make_request(), 0, bad, META)
    assert any(key in note for note in getattr(info.value, "__notes__", []))
    with pytest.raises(ValueError):
        cache.put(key, ENDPOINT, make_request(), 0, {"score": float("nan")}, META)
    assert cache.path_for(key).read_bytes() == before
    assert temp_files(cache.directory) == []
    assert cache.stats.writes == 1


@pytest.mark.parametrize("failing", ["write", "replace"])  # cache entries skip fsync
def test_failure_midway_removes_the_temp_file(
    cache: ResponseCache, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    key = store(cache)
    before = cache.path_for(key).read_bytes()

    def boom(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module.os, failing, boom)
    with pytest.raises(CacheError, match="No space left on device"):
        store(cache, response=make_response("different"))
    monkeypatch.undo()
    assert temp_files(cache.directory) == []
    assert cache.path_for(key).read_bytes() == before


def test_interrupted_write_temp_file_is_invisible_to_readers(cache: ResponseCache) -> None:
    key = store(cache)
    stray = cache.path_for(key).with_name(f".{key}.deadbeef.tmp")
    stray.write_text("{partial", encoding="utf-8")
    assert cache.get(key) is not None
    assert scan(cache.directory).temp_files == 1


# ------------------------------------------------------------------------------------------------ writability


def test_non_writable_directory_raises_cache_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("chmod does not restrict this user (running as root)")
        cache = ResponseCache(locked)
        with pytest.raises(CacheError) as info:
            cache.check_writable()
        for text in (str(locked), CACHE_DIR_ENV, "--cache off"):
            assert text in str(info.value)
        with pytest.raises(CacheError, match="--cache off"):
            store(cache)
    finally:
        locked.chmod(stat.S_IRWXU)


def test_directory_under_a_regular_file_raises_cache_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n", encoding="utf-8")
    directory = blocker / "cache"
    cache = ResponseCache(directory)
    with pytest.raises(CacheError) as info:
        cache.check_writable()
    for text in (str(directory), CACHE_DIR_ENV, "--cache off"):
        assert text in str(info.value)
    with pytest.raises(CacheError, match=CACHE_DIR_ENV):
        store(cache)
    assert cache.stats.writes == 0
    # Reads still work (as misses), so an unwritable cache cannot break lookups.
    assert cache.get(cache_key(ENDPOINT, make_request())) is None


def test_check_writable_creates_the_directory_and_leaves_nothing(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "new" / "cache")
    cache.check_writable()
    assert cache.directory.is_dir()
    assert list(cache.directory.iterdir()) == []
    ResponseCache(tmp_path / "a-file-path-unused", mode="replay").check_writable()


# ------------------------------------------------------------------------------------------------ threads


def test_stats_are_exact_under_a_thread_pool(cache: ResponseCache) -> None:
    cached = [make_request(temperature=i / 100) for i in range(10)]
    for request in cached:
        store(cache, request)
    uncached = [make_request(temperature=1 + i / 100) for i in range(10)]
    keys = [cache_key(ENDPOINT, r) for r in cached] * 20 + [cache_key(ENDPOINT, r) for r in uncached] * 10
    random.Random(7).shuffle(keys)
    barrier = threading.Barrier(16)
    local = threading.local()

    def lookup(key: str) -> bool:
        if not getattr(local, "started", False):  # every worker starts at once, to maximise contention
            local.started = True
            barrier.wait(timeout=10)
        return cache.get(key) is not None

    with ThreadPoolExecutor(max_workers=16) as pool:
        found = list(pool.map(lookup, keys))
    assert sum(found) == 200
    s = cache.stats
    assert (s.hits, s.misses, s.writes) == (200, 100, 10)
    assert s.tokens_saved == 200 * 128
    assert s.dollars_saved == pytest.approx(200 * 0.0005)
    assert s.hits_unknown_cost == 0


def test_concurrent_writes_of_one_key_leave_one_valid_file(cache: ResponseCache) -> None:
    request = make_request()
    key = cache_key(ENDPOINT, request)

    def write(i: int) -> None:
        cache.put(key, ENDPOINT, request, 0, make_response(f"answer {i}"), META)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write, range(40)))
    assert cache.stats.writes == 40
    assert temp_files(cache.directory) == []
    assert cache.get(key) is not None


def test_unknown_costs_are_counted_separately(cache: ResponseCache) -> None:
    a = store(
        cache, make_request(temperature=0.1), meta={"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.25}
    )
    b = store(cache, make_request(temperature=0.2), meta={"input_tokens": 7})
    c = store(cache, make_request(temperature=0.3), meta={"cost_usd": "n/a", "output_tokens": True})
    for key in (a, b, b, c):
        assert cache.get(key) is not None
    s = cache.stats
    assert s.tokens_saved == 15 + 7 + 7
    assert s.dollars_saved == pytest.approx(0.25)
    assert s.hits_unknown_cost == 3


# ------------------------------------------------------------------------------------------------ scan / prune


def _backdate(cache: ResponseCache, key: str, days: float, now: datetime) -> None:
    path = cache.path_for(key)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["meta"]["created_at"] = (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@pytest.fixture
def populated(cache: ResponseCache) -> tuple[ResponseCache, dict[str, str], datetime]:
    now = datetime(2025, 6, 1, tzinfo=UTC)
    keys = {
        "old": store(cache, make_request(temperature=0.1)),
        "mid": store(cache, make_request(temperature=0.2, model="claude-haiku-4-5")),
        "new": store(cache, make_request(temperature=0.3)),
    }
    _backdate(cache, keys["old"], 90, now)
    _backdate(cache, keys["mid"], 20, now)
    _backdate(cache, keys["new"], 1, now)
    return cache, keys, now


def test_scan_summarises_the_cache(populated: tuple[ResponseCache, dict[str, str], datetime]) -> None:
    cache, _, now = populated
    (cache.directory / "README.md").write_text("committed cache\n", encoding="utf-8")
    broken = cache.directory / "ab" / ("ab" + "1" * 62 + ".json")
    broken.parent.mkdir(exist_ok=True)
    broken.write_text("nope", encoding="utf-8")

    summary = scan(cache.directory)
    assert summary.directory == cache.directory
    assert summary.entries == 3
    assert summary.by_model == {"claude-haiku-4-5": 1, "claude-sonnet-4-5": 2}
    assert summary.oldest == now - timedelta(days=90)
    assert summary.newest == now - timedelta(days=1)
    assert summary.bytes == sum(p.stat().st_size for p in cache.directory.glob("*/*.json"))
    assert list(summary.corrupt) == [broken]
    assert "not valid JSON" in summary.corrupt[broken]
    assert summary.temp_files == 0


def test_scan_of_a_missing_directory_is_empty(tmp_path: Path) -> None:
    summary = scan(tmp_path / "nothing-here")
    assert (summary.entries, summary.bytes, summary.by_model, summary.oldest) == (0, 0, {}, None)


def test_scan_and_prune_refuse_a_file_given_as_the_directory(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "cache.json"
    not_a_dir.write_text("{}\n")
    for call in (lambda: scan(not_a_dir), lambda: prune(not_a_dir, older_than_days=1)):
        with pytest.raises(CacheError, match="is a file, not a cache directory"):
            call()
    assert not_a_dir.read_text() == "{}\n"


def test_prune_by_age(populated: tuple[ResponseCache, dict[str, str], datetime]) -> None:
    cache, keys, now = populated
    report = prune(cache.directory, older_than_days=30, now=now)
    assert report.removed == (cache.path_for(keys["old"]),)
    assert report.kept == 2 and report.bytes_freed > 0 and not report.dry_run
    assert not cache.path_for(keys["old"]).exists()
    assert not cache.path_for(keys["old"]).parent.exists() or any(
        cache.path_for(keys["old"]).parent.iterdir()
    )
    assert scan(cache.directory).entries == 2


def test_prune_by_keep_keys_and_both(populated: tuple[ResponseCache, dict[str, str], datetime]) -> None:
    cache, keys, now = populated
    dry = prune(cache.directory, keep_keys={keys["new"]}, dry_run=True, now=now)
    assert dry.dry_run and set(dry.removed) == {cache.path_for(keys["old"]), cache.path_for(keys["mid"])}
    assert scan(cache.directory).entries == 3  # dry run deletes nothing

    both = prune(cache.directory, older_than_days=30, keep_keys=[keys["new"]], now=now)
    assert both.removed == (cache.path_for(keys["old"]),)  # "mid" is unkept but young
    report = prune(cache.directory, keep_keys=[keys["new"]], now=now)
    assert report.removed == (cache.path_for(keys["mid"]),)
    assert scan(cache.directory).entries == 1
    assert cache.get(keys["new"]) is not None


def test_prune_needs_a_criterion_and_removes_stale_temp_files(cache: ResponseCache) -> None:
    with pytest.raises(ValueError, match="older_than_days"):
        prune(cache.directory)
    key = store(cache)
    stale = cache.path_for(key).with_name(f".{key}.0000.tmp")
    stale.write_text("{", encoding="utf-8")
    os.utime(stale, (0, 0))
    fresh = cache.path_for(key).with_name(f".{key}.1111.tmp")
    fresh.write_text("{", encoding="utf-8")
    report = prune(cache.directory, keep_keys=[key])
    assert report.removed == () and report.temp_files_removed == 1
    assert not stale.exists() and fresh.exists()


# ------------------------------------------------------------------------------------------------ review fixes

# Keys computed before secret stripping was narrowed and ints were read as floats: committed caches hold these
# files, so they must never change (or CACHE_FORMAT_VERSION must be bumped, deliberately).
PINNED_REQUESTS: dict[str, dict[str, Any]] = {
    "system": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "You triage support tickets.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "My invoice is wrong"}]}],
        "temperature": 0.0,
        "top_p": 0.9,
        "output_config": {
            "format": {
                "type": "json_schema",
                "schema": {
                    "type": "object",
                    "properties": {"label": {"type": "string", "enum": ["billing", "account"]}},
                    "required": ["label"],
                    "additionalProperties": False,
                },
            }
        },
    },
    "tools": {
        "model": "claude-haiku-4-5",
        "max_tokens": 2048,
        "system": [{"type": "text", "text": "Use the tools."}],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [
            {
                "name": "lookup",
                "description": "Find an order",
                "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            }
        ],
        "tool_choice": {"type": "auto"},
        "messages": [
            {"role": "user", "content": "Where is order 42?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"order_id": "42"}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "shipped"}],
            },
        ],
        "metadata": {"user_id": "u-1"},
        "stop_sequences": ["END"],
        "top_k": 5,
    },
    "judge": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "system": "You grade.",
        "messages": [{"role": "user", "content": "grade this"}],
        "temperature": 1.0,
    },
}
PINNED_KEYS = {
    ("system", 0): "a06f90ff2c1e0b9b0727440e746671de50676be5077d0442223a2bf00d73007c",
    ("system", 2): "d80a47bcbe9048cb20bcb6b2e07cc87046af233326850a2c41340ae6e39a370d",
    ("tools", 0): "3fab97661de2b02a99073447c1055d151d3eaca20b1f8658fbb5885f5ca9b890",
    ("tools", 2): "ebc2eb534eaf22c3f116d45ad92cdd909ccc844510e9a741735b23cbcd41d938",
    ("judge", 0): "4073c05a7bf44f4db3f7652ba856bc083d5a39795846f41cdba47bcda0946a21",
    ("judge", 2): "f366da11828dec0ed527ae1dd2b03047807aab315f591aac7bf066cf4ac7fcae",
}


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


def test_entry_recorded_with_an_int_temperature_is_not_reported_corrupt(cache: ResponseCache) -> None:
    request = make_request(temperature=0)
    document = {"format": CACHE_FORMAT_VERSION, "endpoint": ENDPOINT, "request": request, "repeat": 0}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    old_key = hashlib.sha256(text.encode("utf-8")).hexdigest()  # its key before ints were read as floats
    assert old_key != cache_key(ENDPOINT, request)
    path = cache.path_for(old_key)
    path.parent.mkdir(parents=True)
    entry = {**document, "key": old_key, "response": make_response(), "meta": dict(META)}
    path.write_text(json.dumps(entry, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    summary = scan(cache.directory)
    assert summary.corrupt == {} and summary.entries == 1


NOT_MESSAGES: dict[str, Any] = {
    "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    "no-content": {"type": "message", "role": "assistant"},
    "no-type": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
    "list": [{"type": "text", "text": "hi"}],
    "string": "hi",
}


@pytest.mark.parametrize("kind", list(NOT_MESSAGES))
def test_messages_entry_whose_response_is_not_a_message_is_corrupt(tmp_path: Path, kind: str) -> None:
    writer = ResponseCache(tmp_path)
    request = make_request()
    key = cache_key(MESSAGES_ENDPOINT, request)
    writer.put(key, MESSAGES_ENDPOINT, request, 0, NOT_MESSAGES[kind], META)
    path = writer.path_for(key)

    with pytest.warns(CorruptCacheEntryWarning, match="not a message") as record:
        assert writer.get(key, label="tri-001") is None
    assert str(path) in str(record[0].message)
    assert (writer.stats.hits, writer.stats.misses, writer.stats.corrupt) == (0, 1, 1)

    replay = ResponseCache(tmp_path, mode="replay")
    with pytest.raises(CorruptCacheEntry, match="not a message") as info:
        replay.get(key)
    assert info.value.path == path

    summary = scan(tmp_path)
    assert summary.entries == 0 and "not a message" in summary.corrupt[path]

    writer.put(key, MESSAGES_ENDPOINT, request, 0, make_response(), META)  # refetched
    assert writer.get(key) is not None


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from evalkit.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse rejects bad input with exit 2
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("days", ["-1", "nan", "inf", "1e10", "1000000", "0", "soon"])
def test_prune_rejects_unusable_ages_with_exit_2(
    populated: tuple[ResponseCache, dict[str, str], datetime], capsys: pytest.CaptureFixture[str], days: str
) -> None:
    cache = populated[0]
    code, _, err = _cli(capsys, "cache", "prune", "--older-than", days, "--cache-dir", str(cache.directory))
    assert code == 2
    assert "--older-than" in err and "Traceback" not in err
    assert scan(cache.directory).entries == 3


@pytest.mark.parametrize("days", [float("nan"), float("inf"), -1.0, 1e10, 1_000_000])
def test_prune_function_rejects_unusable_ages_with_value_error(cache: ResponseCache, days: float) -> None:
    with pytest.raises(ValueError, match="older_than_days"):
        prune(cache.directory, older_than_days=days)


def _deny(monkeypatch: pytest.MonkeyPatch, name: str, denied: set[Path]) -> None:
    """Make os.<name> (as evalkit.cache._cache calls it) fail with EACCES for the given paths."""
    real = getattr(cache_module.os, name)

    def guarded(path: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(path) in denied:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(cache_module.os, name, guarded)


def test_stats_report_an_unreadable_shard_folder(
    populated: tuple[ResponseCache, dict[str, str], datetime],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache, keys, _ = populated
    shard = cache.path_for(keys["old"]).parent
    _deny(monkeypatch, "scandir", {shard})
    summary = scan(cache.directory)
    assert summary.unreadable == {shard: "Permission denied"}
    assert summary.entries == 3 - sum(cache.path_for(k).parent == shard for k in keys.values())
    code, out, _ = _cli(capsys, "cache", "stats", "--cache-dir", str(cache.directory))
    assert code == 0
    assert f"unreadable: {shard}: Permission denied" in out


def test_stats_report_an_unreadable_entry_file(
    populated: tuple[ResponseCache, dict[str, str], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, keys, _ = populated
    locked = cache.path_for(keys["mid"])
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(cache_module.Path, "read_bytes", read_bytes)
    summary = scan(cache.directory)
    assert locked in summary.unreadable and "Permission denied" in summary.unreadable[locked]
    assert summary.corrupt == {} and summary.entries == 2


def test_prune_goes_on_past_files_it_cannot_remove_and_exits_2(
    populated: tuple[ResponseCache, dict[str, str], datetime],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache, keys, now = populated
    stuck, gone = cache.path_for(keys["old"]), cache.path_for(keys["mid"])
    _deny(monkeypatch, "unlink", {stuck})

    report = prune(cache.directory, older_than_days=10, now=now)
    assert report.removed == (gone,) and not gone.exists()
    assert report.failed == {stuck: "Permission denied"} and stuck.exists()
    assert not report.complete

    store(cache, make_request(temperature=0.2, model="claude-haiku-4-5"))  # "mid" again, now new
    _backdate(cache, keys["mid"], 20, datetime.now(UTC))
    code, out, err = _cli(capsys, "cache", "prune", "--older-than", "10", "--cache-dir", str(cache.directory))
    assert code == 2
    assert out.startswith("removed 2 entries")  # "mid" again and "new": all but the stuck one are gone
    assert "could not remove 1 file" in err and f"{stuck}: Permission denied" in err
    assert stuck.exists() and not gone.exists() and not cache.path_for(keys["new"]).exists()


def test_prune_reports_unreadable_folders_and_exits_2(
    populated: tuple[ResponseCache, dict[str, str], datetime],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache, keys, _ = populated
    shard = cache.path_for(keys["new"]).parent
    _deny(monkeypatch, "scandir", {shard})
    code, _, err = _cli(capsys, "cache", "prune", "--older-than", "30", "--cache-dir", str(cache.directory))
    assert code == 2
    assert f"{shard}: Permission denied" in err and "not considered" in err


def test_stats_text_on_corrupt_entries_is_true(
    populated: tuple[ResponseCache, dict[str, str], datetime], capsys: pytest.CaptureFixture[str]
) -> None:
    cache, keys, _ = populated
    broken = cache.path_for(keys["old"])
    broken.write_text("{ truncated", encoding="utf-8")
    code, out, _ = _cli(capsys, "cache", "stats", "--cache-dir", str(cache.directory))
    assert code == 0
    assert f"corrupt: {broken}: not valid JSON" in out
    assert "does not touch" not in out
    assert "replay run stops with an error" in out and "prune --older-than" in out
    # and it is true: prune removes a corrupt entry once its file is old enough
    os.utime(broken, (0, 0))
    assert broken in prune(cache.directory, older_than_days=30).removed


def test_dry_run_lists_what_it_would_remove_bounded(
    cache: ResponseCache, capsys: pytest.CaptureFixture[str]
) -> None:
    now = datetime.now(UTC)
    keys = [store(cache, make_request(temperature=i / 100)) for i in range(25)]
    for key in keys:
        _backdate(cache, key, 40, now)
    code, out, _ = _cli(
        capsys, "cache", "prune", "--older-than", "30", "--dry-run", "--cache-dir", str(cache.directory)
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("would remove 25 entries")
    listed = [line.strip() for line in lines[1:] if line.strip().endswith(".json")]
    assert len(listed) == 20 and all(Path(p) in {cache.path_for(k) for k in keys} for p in listed)
    assert lines[-1].strip() == "... and 5 more"
    assert scan(cache.directory).entries == 25


def test_prune_reports_the_stale_temp_files_it_removed(
    cache: ResponseCache, capsys: pytest.CaptureFixture[str]
) -> None:
    key = store(cache)
    stale = [cache.path_for(key).with_name(f".{key}.{n}.tmp") for n in ("0000", "1111")]
    for path in stale:
        path.write_text("{", encoding="utf-8")
        os.utime(path, (0, 0))
    code, out, _ = _cli(capsys, "cache", "prune", "--older-than", "30", "--cache-dir", str(cache.directory))
    assert code == 0
    assert "removed 0 entries (0.00 MB) and 2 stale temp files; kept 1" in out
    assert not any(path.exists() for path in stale)


def test_docstrings_name_the_endpoint_the_runner_uses() -> None:
    assert MESSAGES_ENDPOINT == "/v1/messages"
    for doc in (cache_key.__doc__ or "", ResponseCache.__doc__ or ""):
        assert "/v1/messages" in doc
    assert 'cache_key("messages"' not in (ResponseCache.__doc__ or "")


def test_check_readable_fails_a_replay_without_a_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "no-such-cache"
    with pytest.raises(CacheError) as info:
        ResponseCache(missing, mode="replay").check_readable()
    for text in (f"no cache at {missing}", "does not exist", "--cache-dir", CACHE_DIR_ENV):
        assert text in str(info.value)
    a_file = tmp_path / "cache.json"
    a_file.write_text("{}\n", encoding="utf-8")
    with pytest.raises(CacheError, match="not a directory"):
        ResponseCache(a_file, mode="replay").check_readable()
    for mode in ("readwrite", "refresh", "off"):
        ResponseCache(missing, mode=mode).check_readable()  # type: ignore[arg-type]
    assert not missing.exists()
    store(ResponseCache(tmp_path / "cache"))
    ResponseCache(tmp_path / "cache", mode="replay").check_readable()
    _deny(monkeypatch, "scandir", {tmp_path / "cache"})
    with pytest.raises(CacheError, match="cannot read it"):
        ResponseCache(tmp_path / "cache", mode="replay").check_readable()


def test_entries_of_the_runs_own_batch_are_not_counted_as_saved(tmp_path: Path) -> None:
    key = store(ResponseCache(tmp_path), meta={**META, "batch_id": "msgbatch_01"})
    run = ResponseCache(tmp_path)
    run.paid_batches.add("msgbatch_01")
    entry = run.get(key)
    assert entry is not None and run.paid_for(entry)
    s = run.stats
    assert (s.hits, s.misses, s.tokens_saved, s.dollars_saved, s.hits_unknown_cost) == (0, 1, 0, 0.0, 0)
    later = ResponseCache(tmp_path)  # a later run did not pay for that batch: a real saving
    assert later.get(key) is not None
    assert (later.stats.hits, later.stats.dollars_saved) == (1, pytest.approx(0.0005))
    odd = store(
        ResponseCache(tmp_path), make_request(temperature=0.9), meta={"batch_id": ["not", "a", "str"]}
    )
    assert run.get(odd) is not None and run.stats.hits == 1  # an edited batch_id does not break the lookup


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
