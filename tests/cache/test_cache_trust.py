"""What the cache trusts: which server answered, whether a response was edited, where an entry is written."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from cache_helpers import META, PINNED_KEYS, PINNED_REQUESTS, make_request, make_response, store

from evalkit._cache import (
    MESSAGES_ENDPOINT,
    ResponseCache,
    api_origin,
    cache_key,
    scan,
)
from evalkit.errors import (
    CacheError,
    CorruptCacheEntry,
    CorruptCacheEntryWarning,
    EditedCacheEntry,
    UnverifiedCacheEntryWarning,
)

LOCAL = "http://127.0.0.1:8765"

# ------------------------------------------------------------------------------------------------ the server


@pytest.mark.parametrize(
    "default",
    [
        None,
        "",
        "  ",
        "https://api.anthropic.com",
        "https://api.anthropic.com/",
        "HTTPS://API.Anthropic.com:443/",
    ],
)
def test_keys_for_the_default_endpoint_are_the_pinned_ones(
    monkeypatch: pytest.MonkeyPatch, default: str | None
) -> None:
    if default is not None:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", default)
    assert api_origin() is None
    for (name, repeat), key in PINNED_KEYS.items():
        assert cache_key(MESSAGES_ENDPOINT, PINNED_REQUESTS[name], repeat) == key
        assert cache_key(MESSAGES_ENDPOINT, PINNED_REQUESTS[name], repeat, base_url=default) == key


def test_another_server_gets_other_keys_from_the_environment_or_the_argument(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    request = PINNED_REQUESTS["judge"]
    default = cache_key(MESSAGES_ENDPOINT, request)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", LOCAL)
    local = cache_key(MESSAGES_ENDPOINT, request)
    assert local != default
    assert cache_key(MESSAGES_ENDPOINT, request, base_url=LOCAL + "/") == local  # one server, one key
    assert cache_key(MESSAGES_ENDPOINT, request, base_url="https://api.anthropic.com") == default
    other = cache_key(MESSAGES_ENDPOINT, request, base_url="http://127.0.0.1:8766")
    assert other not in (default, local)
    proxy = cache_key(MESSAGES_ENDPOINT, request, base_url="https://gateway.example/anthropic")
    assert proxy not in (default, local, other)


def test_local_answers_are_never_replayed_as_the_real_apis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = [make_request(temperature=t / 10) for t in range(15)]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", LOCAL)
    local = ResponseCache(tmp_path)
    for request in requests:
        key = cache_key(MESSAGES_ENDPOINT, request)
        local.put(key, MESSAGES_ENDPOINT, request, 0, make_response("from the local server"), META)
    assert all(local.get(cache_key(MESSAGES_ENDPOINT, r)) is not None for r in requests)
    entry = local.get(cache_key(MESSAGES_ENDPOINT, requests[0]))
    assert entry is not None and entry.base_url == LOCAL
    assert json.loads(entry.path.read_text(encoding="utf-8"))["base_url"] == LOCAL

    monkeypatch.delenv("ANTHROPIC_BASE_URL")  # now against the real API
    real = ResponseCache(tmp_path)
    assert [real.get(cache_key(MESSAGES_ENDPOINT, r)) for r in requests] == [None] * 15
    assert (real.stats.hits, real.stats.misses) == (0, 15)
    assert scan(tmp_path).corrupt == {}  # the local entries are whole, just not the real API's


def test_credentials_in_the_base_url_never_reach_the_key_or_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = make_request()
    with_password = "https://alice:hunter2-secret@proxy.example:8443/v1?token=q-secret#frag"
    assert api_origin(with_password) == "https://proxy.example:8443/v1"
    assert cache_key(MESSAGES_ENDPOINT, request, base_url=with_password) == cache_key(
        MESSAGES_ENDPOINT, request, base_url="https://proxy.example:8443/v1"
    )
    monkeypatch.setenv("ANTHROPIC_BASE_URL", with_password)
    cache = ResponseCache(tmp_path)
    key = cache_key(MESSAGES_ENDPOINT, request)
    cache.put(key, MESSAGES_ENDPOINT, request, 0, make_response(), META, verify=False)
    text = cache.path_for(key).read_text(encoding="utf-8")
    assert "secret" not in text and "alice" not in text
    assert cache.get(key) is not None


# ------------------------------------------------------------------------------------------------ edits


def _flip_text(data: dict[str, Any], n: int) -> None:
    data["response"]["content"][0]["text"] = f'{{"label": "edited-{n}"}}'


def _flip_verdict(data: dict[str, Any], n: int) -> None:
    data["response"]["content"][0]["text"] = json.dumps({"verdict": "pass", "reasoning": f"fine {n}"})


@pytest.mark.parametrize("edit", [_flip_text, _flip_verdict])
def test_every_edited_response_is_caught_on_replay_naming_the_file(tmp_path: Path, edit: Any) -> None:
    writer = ResponseCache(tmp_path)
    keys = [
        store(writer, make_request(temperature=t / 10), response=make_response('{"verdict": "fail"}'))
        for t in range(10)
    ]
    for n, key in enumerate(keys):
        path = writer.path_for(key)
        data = json.loads(path.read_text(encoding="utf-8"))
        edit(data, n)
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    replay = ResponseCache(tmp_path, mode="replay")
    caught = 0
    for key in keys:
        with pytest.raises(EditedCacheEntry) as info:
            replay.get(key, label="tri-001")
        assert isinstance(info.value, CorruptCacheEntry) and info.value.path == writer.path_for(key)
        message = str(info.value)
        assert str(writer.path_for(key)) in message and "digest" in message
        assert "git diff" in message and "readwrite" in message
        caught += 1
    assert caught == 10

    readwrite = ResponseCache(tmp_path)
    with pytest.warns(CorruptCacheEntryWarning, match="Edited cache entry") as record:
        assert readwrite.get(keys[0]) is None
    assert str(writer.path_for(keys[0])) in str(record[0].message)
    assert len(scan(tmp_path).corrupt) == 10


def test_a_response_copied_from_another_entry_is_caught(cache: ResponseCache) -> None:
    passing = store(cache, make_request(temperature=0.1), response=make_response('{"verdict": "pass"}'))
    failing = store(cache, make_request(temperature=0.2), response=make_response('{"verdict": "fail"}'))
    source = json.loads(cache.path_for(passing).read_text(encoding="utf-8"))
    target_path = cache.path_for(failing)
    target = json.loads(target_path.read_text(encoding="utf-8"))
    target["response"], target["digest"] = source["response"], source["digest"]
    target_path.write_text(json.dumps(target), encoding="utf-8")
    with pytest.raises(EditedCacheEntry):
        ResponseCache(cache.directory, mode="replay").get(failing)


def test_entries_without_a_digest_are_used_with_one_note(cache: ResponseCache) -> None:
    keys = [store(cache, make_request(temperature=t / 10)) for t in range(3)]
    for key in keys:
        path = cache.path_for(key)
        data = json.loads(path.read_text(encoding="utf-8"))
        del data["digest"]  # as recorded before entries carried one
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    replay = ResponseCache(cache.directory, mode="replay")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        entries = [replay.get(key) for key in keys]
    assert all(entry is not None and entry.digest is None for entry in entries)
    notes = [w for w in record if issubclass(w.category, UnverifiedCacheEntryWarning)]
    assert len(notes) == 1 and "--cache refresh" in str(notes[0].message)
    assert scan(cache.directory).unverified == 3
    store(cache, make_request(temperature=0.0))  # recorded again: sealed
    assert scan(cache.directory).unverified == 2


# ------------------------------------------------------------------------------------------------ links


def test_a_symlinked_shard_is_never_written_through(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    request = make_request()
    key = cache_key(MESSAGES_ENDPOINT, request)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "cache").mkdir()
    shard = cache.path_for(key).parent
    shard.symlink_to(outside, target_is_directory=True)
    with pytest.raises(CacheError) as info:
        cache.put(key, MESSAGES_ENDPOINT, request, 0, make_response(), META)
    message = str(info.value)
    assert str(shard) in message and "symbolic link" in message and "Remove the link" in message
    assert list(outside.iterdir()) == []


def test_a_symlinked_entry_is_never_written_through_nor_read(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    request = make_request()
    key = cache_key(MESSAGES_ENDPOINT, request)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    path = cache.path_for(key)
    path.parent.mkdir(parents=True)
    path.symlink_to(victim)
    with pytest.raises(CacheError, match="symbolic link") as info:
        cache.put(key, MESSAGES_ENDPOINT, request, 0, make_response(), META)
    assert str(path) in str(info.value)
    assert victim.read_text(encoding="utf-8") == "keep me\n" and path.is_symlink()
    with pytest.raises(CorruptCacheEntry, match="symbolic link"):
        ResponseCache(tmp_path / "cache", mode="replay").get(key)
    assert not [p for p in os.listdir(path.parent) if p.endswith(".tmp")]
