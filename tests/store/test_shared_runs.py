"""Runs on a store: shards from separate folders merged and gated there, a crashed run and a killed publish
resumed without a case run twice, two writers of one run, and history read from the bucket."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from store_helpers import S3, machine

import evalkit as ek
from evalkit._store import parse_url, publish_run, pull_run
from evalkit.cli import main
from evalkit.errors import StorageError

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "goldens" / "support-triage"
BASELINE = SUITE / "baseline.json"


def _verdicts(run: ek.Run) -> pl.DataFrame:
    return run.verdicts().select("case_id", "repeat", "status").sort("case_id", "repeat")


def test_three_shards_from_three_folders_merge_on_the_store_and_gate_like_the_whole_run(
    s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = ek.run(SUITE, "baseline", out=tmp_path / "whole", progress=False)
    for i in (1, 2, 3):
        machine(tmp_path / f"job{i}", monkeypatch)
        assert main(["run", str(SUITE), "--shard", f"{i}/3", "--out", s3.url(f"pr-7/shard-{i}"), "-q"]) == 0
    out = capsys.readouterr().out
    assert f"run saved to {s3.url('pr-7/shard-3')}" in out
    machine(tmp_path / "gate-job", monkeypatch)  # merges from the store alone: none of the shards' folders
    parts = [s3.url(f"pr-7/shard-{i}") for i in (1, 2, 3)]
    assert main(["merge", *parts, "--out", s3.url("pr-7/merged")]) == 0
    capsys.readouterr()
    machine(tmp_path / "reader", monkeypatch)
    merged = ek.load_run(s3.url("pr-7/merged"))
    assert merged.url == s3.url("pr-7/merged") and merged.manifest.cases == 159
    assert _verdicts(merged).equals(_verdicts(whole))
    expected = whole.gate(BASELINE)
    assert main(["gate", s3.url("pr-7/merged"), "--baseline", str(BASELINE)]) == expected.exit_code
    printed = capsys.readouterr().out.strip().replace(merged.id, whole.id)
    assert printed == expected.text.strip()
    # the store holds each run's manifest and one generation of its files, nothing half-written
    manifests = [k for k in s3.keys("pr-7/") if k.endswith("manifest.json")]
    assert len(manifests) == 4


def test_a_store_run_killed_part_way_resumes_from_its_url_and_no_case_runs_twice(
    s3: S3,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make_suite: Callable[..., Path],
    anthropic_env: Any,
) -> None:
    suite = make_suite(24)
    url = s3.url("runs/nightly")
    machine(tmp_path / "ci", monkeypatch)
    env = {**os.environ, "EVALKIT_FAILPOINT": "case:journalled@10"}
    command = [sys.executable, "-m", "evalkit.cli", "run", str(suite), "--system", "claude", "--out", url]
    killed = subprocess.run([*command, "-q", "--concurrency", "1"], env=env, capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    assert not s3.keys("runs/")  # killed before it could publish: readers see no run
    lines = (parse_url(url).local / "results.jsonl").read_text().splitlines()
    journalled = {json.loads(line)["case_id"] for line in lines}
    assert len(journalled) == 10
    asked = {f"case c{i:03d}" for i in range(24)}
    with pytest.raises(StorageError, match="no run here"):
        pull_run(parse_url(url), tmp_path / "another-machine")
    resumed = subprocess.run(
        [sys.executable, "-m", "evalkit.cli", "run", "--resume", url, "-q"], capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"run saved to {url}" in resumed.stdout
    calls = [r.body["messages"][-1]["content"] for r in anthropic_env.requests_to("/v1/messages")]
    again = {c for c in calls if calls.count(c) > 1}
    # a case journalled before the kill is never sent again; only the one call in flight at the kill can be
    assert not again & {f"case {c}" for c in journalled} and len(again) <= 1 and set(calls) == set(asked)
    machine(tmp_path / "reader", monkeypatch)
    run = ek.load_run(url)
    assert run.status == "complete" and run.verdicts().height == 24


def test_a_publish_killed_part_way_leaves_readers_the_version_before(
    s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = s3.url("runs/r1")
    machine(tmp_path / "ci", monkeypatch)
    first = ek.run(SUITE, "baseline", out=url, progress=False)
    before = s3.keys("runs/r1/")
    # the run is published again with its report (evalkit run --report does this); killed mid-publish
    (first.path / "report.html").write_text("<html>report</html>")
    script = (
        "import sys; from evalkit._store import parse_url, publish_run; "
        "from pathlib import Path; publish_run(Path(sys.argv[1]), parse_url(sys.argv[2]))"
    )
    env = {**os.environ, "EVALKIT_FAILPOINT": "publish:file@2"}
    killed = subprocess.run([sys.executable, "-c", script, str(first.path), url], env=env)
    assert killed.returncode == -9
    assert len(s3.keys("runs/r1/")) > len(before)  # its files went up under a new generation ...
    reader = tmp_path / "reader-store"
    seen = pull_run(parse_url(url), reader)  # ... but the manifest still names the old one
    assert not (seen / "report.html").exists()
    assert json.loads((seen / "manifest.json").read_text())["published"]["files"].keys() == {
        "results.jsonl",
        "results.parquet",
    }
    publish_run(first.path, parse_url(url))  # the next publish goes through, and drops the old generation
    seen = pull_run(parse_url(url), reader)
    assert (seen / "report.html").read_text() == "<html>report</html>"
    generations = {k.split("/")[2] for k in s3.keys("runs/r1/") if k.count("/") == 3}
    assert len(generations) == 2  # the live one, and the killed publish's orphans (named by no manifest)


def test_a_second_writer_of_one_run_is_refused_and_leaves_nothing(
    s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = s3.url("runs/same-name")
    machine(tmp_path / "a", monkeypatch)
    a = ek.run(SUITE, "baseline", out=tmp_path / "a-run", progress=False)
    b = ek.run(SUITE, "baseline", out=tmp_path / "b-run", progress=False)
    publish_run(a.path, parse_url(url))
    keys = s3.keys("runs/")
    with pytest.raises(StorageError, match="another writer published this run first"):
        publish_run(b.path, parse_url(url))
    assert s3.keys("runs/") == keys
    # a new run asked to go where one is published is refused before it runs
    assert main(["run", str(SUITE), "--out", url, "-q"]) == 2
    # two resumes of one published version: the first to publish wins, the second is refused (if-match)
    one, two = pull_run(parse_url(url), tmp_path / "m1"), pull_run(parse_url(url), tmp_path / "m2")
    (one / "note.txt").write_text("one")
    (two / "note.txt").write_text("two")
    publish_run(one, parse_url(url))
    with pytest.raises(StorageError, match="another writer"):
        publish_run(two, parse_url(url))
    assert (pull_run(parse_url(url), tmp_path / "m3") / "note.txt").read_text() == "one"


def _label_swap(ticket: dict[str, Any]) -> str:
    return "other"


def test_history_is_read_from_the_bucket(s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = s3.url("nightly/runs")
    for i in range(3):
        machine(tmp_path / f"night{i}", monkeypatch)
        ek.run(SUITE, "baseline", runs_dir=runs, progress=False)
    machine(tmp_path / "laptop", monkeypatch)
    listed = ek.runs(runs)
    assert listed.height == 3 and all(p.startswith(runs + "/") for p in listed["path"])
    history = ek.history(runs, suite="support-triage")
    assert history.height == 3 and history["rate"].n_unique() == 1
    assert history["started_at"].is_sorted()


def test_a_run_stopped_for_money_is_published_as_it_stands_and_resumes_from_its_url(
    s3: S3,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make_suite: Callable[..., Path],
    anthropic_env: Any,
) -> None:
    from evalkit.errors import SpendingStopped

    suite = make_suite(40)
    url = s3.url("runs/capped")
    machine(tmp_path / "ci", monkeypatch)
    with pytest.raises(SpendingStopped) as stopped:
        ek.run(suite, "claude", out=url, max_cost=0.002, concurrency=2, progress=False)
    assert f"--resume {url}" in str(stopped.value)  # the command names the store, not this machine's copy
    machine(tmp_path / "laptop", monkeypatch)
    seen = ek.load_run(url)
    assert seen.status == "interrupted" and 0 < seen.verdicts().height < 40
    machine(tmp_path / "ci-2", monkeypatch)  # finished on another machine, from the store
    done = ek.resume(url, max_cost=1.0, progress=False)
    assert done.url == url and done.status == "complete" and done.verdicts().height == 40
    calls = [r.body["messages"][-1]["content"] for r in anthropic_env.requests_to("/v1/messages")]
    assert len(calls) == len(set(calls)) == 40  # nothing paid twice across the stop, the move and the resume
    machine(tmp_path / "reader", monkeypatch)
    assert ek.load_run(url).status == "complete"
    # and the baseline is accepted from the URL like from a folder
    assert main(["baseline", "accept", url, "--to", str(tmp_path / "baseline.json")]) == 0
    assert json.loads((tmp_path / "baseline.json").read_text())["run_id"] == done.id


def test_the_report_run_writes_is_published_with_the_run(
    s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    machine(tmp_path / "ci", monkeypatch)
    assert (
        main(["run", str(SUITE), "--runs-dir", s3.url("runs"), "-q", "--report", "--show-failures", "0"]) == 0
    )
    assert "(published with the run to s3://" in capsys.readouterr().out
    keys = s3.keys("runs/")
    assert (
        len({k.split("/")[2] for k in keys if k.count("/") == 3}) == 1
    )  # one generation: the first one removed
    assert any(k.endswith("/report.html") for k in keys)
    machine(tmp_path / "reader", monkeypatch)
    (listed,) = ek.runs(s3.url("runs"))["path"].to_list()
    assert (ek.load_run(listed).path / "report.html").is_file()
