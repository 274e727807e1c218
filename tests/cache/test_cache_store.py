"""The response cache: files, modes, corruption, atomic writes, writability, threads."""

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
from cache_helpers import (
    ENDPOINT,
    META,
    _deny,
    make_request,
    make_response,
    store,
    temp_files,
)

from evalkit._cache import (
    CACHE_DIR_ENV,
    CACHE_FORMAT_VERSION,
    MESSAGES_ENDPOINT,
    CacheEntry,
    CacheMode,
    CacheStats,
    ResponseCache,
    cache_key,
    scan,
)
from evalkit.errors import CacheError, CacheMiss, CorruptCacheEntry, CorruptCacheEntryWarning

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
    assert set(data) == {"format", "key", "endpoint", "repeat", "request", "response", "digest", "meta"}
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


def test_a_replay_under_another_base_url_says_where_the_cache_was_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8799")
    store(ResponseCache(tmp_path))  # recorded against the local server
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    replay = ResponseCache(tmp_path, mode=CacheMode.REPLAY)
    with pytest.raises(CacheMiss) as info:
        replay.get(cache_key(ENDPOINT, make_request()), label="tri-007")
    message = str(info.value)
    assert "recorded against http://127.0.0.1:8799; this run asks https://api.anthropic.com" in message
    assert "ANTHROPIC_BASE_URL" in message and "tri-007" in message
    # asked under the address it was recorded against, the same request is found
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8799/")
    assert ResponseCache(tmp_path, mode=CacheMode.REPLAY).get(cache_key(ENDPOINT, make_request())) is not None


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
    assert off.stats == fresh.stats == CacheStats()


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

    monkeypatch.setattr(os, failing, boom)
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
