"""The response cache on a store: a second machine replays the first one's calls for nothing, two writers of one
key leave one whole entry, and an entry changed on the store is caught by its digest and replaced."""

from __future__ import annotations

import json
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from store_helpers import S3, machine

import evalkit as ek
from evalkit._cache import MESSAGES_ENDPOINT, ResponseCache, cache_key
from evalkit.errors import CorruptCacheEntryWarning, EditedCacheEntry


def test_machine_b_replays_machine_a_calls_from_the_shared_cache_and_pays_nothing(
    s3: S3,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make_suite: Callable[..., Path],
    anthropic_env: Any,
) -> None:
    suite = make_suite(30)
    cache = s3.url("team/cache")
    machine(tmp_path / "a", monkeypatch)
    a = ek.run(suite, "claude", cache_dir=cache, out=tmp_path / "a" / "run", progress=False)
    paid = len(anthropic_env.requests_to("/v1/messages"))
    assert paid == 30 and len([k for k in s3.keys("team/cache/") if k.endswith(".json")]) == 30
    assert a.manifest.cache["directory"] == cache
    machine(tmp_path / "b", monkeypatch)  # another machine: an empty local layer
    b = ek.run(suite, "claude", cache_dir=cache, out=tmp_path / "b" / "run", progress=False)
    assert len(anthropic_env.requests_to("/v1/messages")) == paid  # nothing new was sent
    assert "spent $0.0000 (the cache saved" in b.summary() and "cache hits 30/30" in b.summary()
    assert "cache hits 0/30" in a.summary()
    assert b.verdicts().select("case_id", "status").equals(a.verdicts().select("case_id", "status"))
    assert (
        tmp_path / "b" / ".evalkit" / "store" / s3.bucket / "team" / "cache"
    ).is_dir()  # read through the local layer
    # replay (CI with no key): the store is the cache, and a miss names it
    machine(tmp_path / "c", monkeypatch)
    c = ek.run(suite, "claude", cache="replay", cache_dir=cache, out=tmp_path / "c" / "run", progress=False)
    assert c.status == "complete" and len(anthropic_env.requests_to("/v1/messages")) == paid


def _request(n: int) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-6", "max_tokens": 8, "messages": [{"role": "user", "content": f"q{n}"}]}


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}


def test_two_writers_of_one_key_at_once_leave_one_whole_entry(
    s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = s3.url("cache")
    keys = [cache_key(MESSAGES_ENDPOINT, _request(n)) for n in range(12)]
    writers = {}
    for name in ("a", "b"):
        monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / name))  # each its own local layer
        writers[name] = ResponseCache(url)
    barrier = threading.Barrier(2)

    def write(name: str) -> None:
        barrier.wait()
        for n, key in enumerate(keys):
            writers[name].put(key, MESSAGES_ENDPOINT, _request(n), 0, _message(f"{name} answers q{n}" * 50))

    threads = [threading.Thread(target=write, args=(name,)) for name in writers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = [k for k in s3.keys("cache/") if k.endswith(".json")]
    assert len(stored) == len(keys)  # one object per key
    assert sum(w.remote.written for w in writers.values() if w.remote) == len(
        keys
    )  # the second write was refused
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "reader"))
    reader = ResponseCache(url, mode="replay")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptCacheEntryWarning)
        for n, key in enumerate(keys):
            entry = reader.get(key)
            assert entry is not None
            text = entry.response["content"][0]["text"]
            assert text in (f"a answers q{n}" * 50, f"b answers q{n}" * 50)  # whole, from one writer


def test_an_entry_changed_on_the_store_is_caught_and_replaced(
    s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = s3.url("cache")
    key = cache_key(MESSAGES_ENDPOINT, _request(1))
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "a"))
    ResponseCache(url).put(key, MESSAGES_ENDPOINT, _request(1), 0, _message("billing"))
    object_key = f"cache/{key[:2]}/{key}.json"
    body = json.loads(s3.client().get_object(Bucket=s3.bucket, Key=object_key)["Body"].read())
    body["response"]["content"][0]["text"] = "refund approved"  # edited on the store
    s3.client().put_object(Bucket=s3.bucket, Key=object_key, Body=json.dumps(body).encode())
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "b"))
    with pytest.raises(EditedCacheEntry):
        ResponseCache(url, mode="replay").get(key)
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "c"))
    cache = ResponseCache(url)
    with pytest.warns(CorruptCacheEntryWarning, match="Edited"):
        assert cache.get(key) is None  # a miss: fetched again ...
    cache.put(
        key, MESSAGES_ENDPOINT, _request(1), 0, _message("billing")
    )  # ... and the edited object replaced
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "d"))
    entry = ResponseCache(url, mode="replay").get(key)
    assert entry is not None and entry.response["content"][0]["text"] == "billing"


def test_cache_stats_counts_the_store_and_prune_points_at_lifecycle_rules(
    s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.cli import main

    url = s3.url("cache")
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "a"))
    for n in range(3):
        ResponseCache(url).put(
            cache_key(MESSAGES_ENDPOINT, _request(n)), MESSAGES_ENDPOINT, _request(n), 0, _message("x")
        )
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "b"))  # another machine: nothing local yet
    assert main(["cache", "stats", "--cache-dir", url]) == 0
    out = capsys.readouterr().out
    assert f"cache {url} (on the store): 3 objects" in out and "0 entries" in out
    assert main(["cache", "prune", "--cache-dir", url, "--older-than", "30"]) == 2
    assert "lifecycle rules" in capsys.readouterr().err
    assert len([k for k in s3.keys("cache/") if k.endswith(".json")]) == 3
