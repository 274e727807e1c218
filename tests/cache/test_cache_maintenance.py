"""Cache maintenance: scan and prune, and the cache CLI."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cache_helpers import (
    _backdate,
    _cli,
    _deny,
    make_request,
    store,
)

from evalkit._cache import (
    ResponseCache,
    prune,
    scan,
)
from evalkit.errors import CacheError

# ------------------------------------------------------------------------------------------------ scan / prune


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
    _deny(monkeypatch, "open", {locked})  # entries are opened with os.open, never following a link
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
