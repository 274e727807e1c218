"""Reliability of Claude runs against the local Anthropic-compatible server, through the real SDK.

Injected faults of every kind, a run killed with SIGKILL and resumed, bad inputs on the command line, the API
key never written anywhere, and a rerun answered entirely from the response cache.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalkit._client import Client
from evalkit._client import _pricing as pricing
from evalkit._results import RunDir, read_run
from evalkit._runner import Runner, RunOptions
from evalkit._systems import load_system
from evalkit.suite import load_suite
from evalkit.testing.server import (
    FAULT_KINDS,
    FaultPlan,
    LocalAnthropicServer,
    RequestRecord,
    last_user_text,
)

# end-to-end: real processes, servers or kernels (`pytest -m 'not slow'` leaves them out while working)
pytestmark = pytest.mark.slow

MESSAGES = "/v1/messages"
SECRET = "sk-ant-test-SECRET-1234567890"
KEY = "sk-ant-local-reliability"
RESOLVED = {"claude-sonnet-4-6": "claude-sonnet-4-6-20261001"}


# -- a small parity suite whose user turn names its case ------------------------------------------------------


def case_id(i: int) -> str:
    return f"c{i:03d}"


def user_turn(i: int) -> str:
    return f"case {case_id(i)}"


def number_of(text: str) -> int:
    return int(text.rsplit("c", 1)[-1])


def wrong_on_purpose(i: int) -> bool:
    return i % 7 == 3


def parity_responder(body: dict[str, Any]) -> str:
    """Right for most cases, deliberately wrong for a few, so that runs hold passes and fails."""
    i = number_of(last_user_text(body))
    right = "even" if i % 2 == 0 else "odd"
    if wrong_on_purpose(i):
        return "odd" if right == "even" else "even"
    return right


def case_of(record: RequestRecord) -> str:
    return case_id(number_of(last_user_text(record.body)))


def message_requests(records: Iterable[RequestRecord]) -> list[RequestRecord]:
    return [r for r in records if r.path == MESSAGES and isinstance(r.body, dict)]


def requests_per_case(records: Iterable[RequestRecord]) -> Counter[str]:
    return Counter(case_of(r) for r in message_requests(records))


def answered(record: RequestRecord) -> bool:
    return record.fault is None and record.status == 200


def cli_env(server: LocalAnthropicServer, key: str = KEY) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("EVALKIT_CACHE_DIR", "EVALKIT_PRICES", "ANTHROPIC_AUTH_TOKEN")
    }
    env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY=key, PYTHONUNBUFFERED="1")
    return env


def evalkit(
    *args: str, env: dict[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalkit.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )


def run_claude(
    suite: Path, *args: str, env: dict[str, str], cwd: Path, system: str = "claude"
) -> subprocess.CompletedProcess[str]:
    """`evalkit run SUITE --system claude ARGS... -q`."""
    return evalkit("run", str(suite), "--system", system, *args, "-q", env=env, cwd=cwd)


def journal_lines(run_dir: Path) -> list[dict[str, Any]]:
    text = (run_dir / "results.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")]


def finished_run(
    tmp_path: Path,
    make_suite: Callable[..., Path],
    make_anthropic_server: Any,
    n: int,
    suite: Path | None = None,
) -> tuple[LocalAnthropicServer, dict[str, str], Path, list[str]]:
    """A complete Claude run of an n-case parity suite, cached in tmp_path/cache: its server, environment, run
    directory and journal lines. `suite` is the path given to `evalkit run` (relative to tmp_path)."""
    root = make_suite(n)
    server = make_anthropic_server(responder=parity_responder)
    env = cli_env(server)
    out = tmp_path / "runs" / "r1"
    first = run_claude(
        suite or root, "--cache-dir", str(tmp_path / "cache"), "--out", str(out), env=env, cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    return server, env, out, (out / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def signal_midway(
    suite: Path,
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    journal: Path,
    lines: int,
    signum: int,
    group: bool = False,
) -> tuple[int, str]:
    """`evalkit run SUITE --system claude ARGS -q`, sent `signum` once its journal has `lines` lines: its exit
    code and standard error. With `group`, the signal goes to its whole process group, as Ctrl-C in a terminal."""
    argv = [sys.executable, "-m", "evalkit.cli", "run", str(suite), "--system", "claude", *args, "-q"]
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists() and journal.read_bytes().count(b"\n") >= lines:
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the run ended before the signal could be sent"
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, stderr


def cached_cases(cache_dir: Path) -> set[str]:
    """The case ids with a response in the cache (whose entries are written atomically, never half)."""
    out = set()
    for path in cache_dir.glob("*/*.json"):
        entry = json.loads(path.read_text(encoding="utf-8"))
        out.add(case_id(number_of(entry["request"]["messages"][-1]["content"])))
    return out


def run_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []


# -- 1. 300 cases under 20% injected faults of every kind ------------------------------------------------------


def test_faults_of_every_kind_end_as_errors_and_resume_finishes_only_those(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    n = 300
    suite = load_suite(make_suite(n))
    system = load_system("claude", suite)
    server = make_anthropic_server(
        responder=parity_responder,
        faults=FaultPlan(rate=0.2, kinds=FAULT_KINDS, seed=11),
        retry_after=0.05,
        hang_s=1.0,
    )
    opts = RunOptions(
        out_root=tmp_path / "runs", cache_dir=tmp_path / "cache", concurrency=32, progress=False
    )
    max_retries = 1
    client = Client(
        base_url=server.base_url, api_key=KEY, max_retries=max_retries, timeout=0.5, max_concurrency=32
    )
    first = Runner(suite, system, opts, client=client).run()
    client.close()

    log = message_requests(server.requests)
    assert {r.fault for r in log} >= set(FAULT_KINDS), "every fault kind was injected"
    assert first.manifest.status == "complete"
    results = {r.case_id: r for r in first.results}
    assert len(first.results) == n and set(results) == {case_id(i) for i in range(n)}
    _, rows = read_run(first.run_dir)
    assert rows.height == n and rows.select("case_id", "repeat").n_unique() == n
    assert len(journal_lines(first.run_dir)) == n

    by_case: dict[str, list[RequestRecord]] = {}
    for record in log:
        by_case.setdefault(case_of(record), []).append(record)
    errors = {cid for cid, r in results.items() if r.status == "error"}
    assert errors, "max_retries=1 under 20% faults leaves some cases with their retries spent"
    assert first.totals.errors == len(errors)
    for cid, result in results.items():
        records = by_case[cid]
        if cid in errors:
            # retries ran out: every attempt faulted (or, on a loaded host, the client's 0.5 s timeout ran out on
            # one the server had not answered yet), and the result is an error, never a pass or a fail
            assert all(r.fault is not None for r in records) or result.error_kind == "timeout", (
                cid,
                [(r.fault, r.status) for r in records],
                result.error,
            )
            assert len(records) >= max_retries + 1
            assert result.output is None and result.error and result.error.startswith("CallError")
            assert [c.status for c in result.checks] == ["error"]
            assert result.checks[0].passed is None
        else:
            assert answered(records[-1]), (cid, [(r.fault, r.status) for r in records])
            expected = "fail" if wrong_on_purpose(number_of(cid)) else "pass"
            assert result.status == expected, (cid, result.status, result.error)
    errored_rows = rows.filter(pl.col("case_status") == "error")
    assert set(errored_rows["case_id"]) == errors
    assert errored_rows["passed"].null_count() == errored_rows.height

    seen = len(server.requests)
    client = Client(base_url=server.base_url, api_key=KEY, max_retries=8, timeout=0.5, max_concurrency=32)
    again = Runner(suite, system, opts, client=client).run(resume=first.run_dir)
    client.close()

    assert again.run_dir == first.run_dir and again.manifest.status == "complete"
    assert again.resumed == n - len(errors)
    assert [r for r in again.results if r.status == "error"] == []
    requested_again = set(requests_per_case(server.requests[seen:]))
    assert requested_again == errors, "only the errored cases are requested on resume"
    _, rows = read_run(first.run_dir)
    assert rows.height == n and rows.select("case_id", "repeat").n_unique() == n
    assert rows["case_status"].value_counts().sort("case_status").rows() == [
        ("fail", sum(wrong_on_purpose(i) for i in range(n))),
        ("pass", sum(not wrong_on_purpose(i) for i in range(n))),
    ]
    assert len(journal_lines(first.run_dir)) == n


# -- 2. SIGKILL halfway through `evalkit run`, then --resume ---------------------------------------------------


def test_sigkill_halfway_then_resume_requests_no_finished_case_again(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    n = 120
    root = make_suite(n)
    server = make_anthropic_server(responder=parity_responder, latency=0.05)
    env = cli_env(server)
    cache, out = tmp_path / "cache", tmp_path / "runs" / "killed"
    journal = out / "results.jsonl"
    args = ["--cache-dir", str(cache), "--out", str(out), "--concurrency", "4"]
    returncode, _ = signal_midway(root, args, env, tmp_path, journal, n // 2, signal.SIGKILL)
    assert returncode == -signal.SIGKILL

    journalled = {line["case_id"] for line in journal_lines(out)}
    cached_at_kill = cached_cases(cache)
    at_kill = requests_per_case(server.requests)
    assert n // 2 <= len(journalled) < n
    assert journalled <= cached_at_kill
    assert json.loads((out / "manifest.json").read_text())["status"] == "running"
    assert not (out / "results.parquet").exists()

    seen = len(server.requests)
    done = evalkit("run", "--resume", str(out), "--cache-dir", str(cache), "-q", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr

    manifest, rows = read_run(out)
    assert manifest.status == "complete"
    assert rows.height == n and sorted(rows["case_id"]) == [case_id(i) for i in range(n)]
    assert rows.select("case_id", "repeat").n_unique() == n
    assert len(journal_lines(out)) == n
    assert rows.filter(pl.col("case_status") == "error").height == 0

    total = requests_per_case(server.requests)
    assert set(total) == {case_id(i) for i in range(n)}
    for cid in journalled | cached_at_kill:
        assert total[cid] == 1, f"{cid} was finished (journalled or cached) at kill time but requested again"
    for cid, count in total.items():
        # a case in flight at kill time is requested again only when its response had not been cached
        assert count <= 2, cid
        if count == 2:
            assert cid not in cached_at_kill and at_kill[cid] == 1
    assert set(requests_per_case(server.requests[seen:])).isdisjoint(cached_at_kill)


def test_sigterm_stops_a_worker_run_cleanly_and_resume_finishes_it(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    """A cancelled CI job gets SIGTERM: the run stops as on Ctrl-C, marked interrupted, saying how to resume."""
    n = 300
    root = make_suite(n)
    server = make_anthropic_server(responder=parity_responder, latency=0.2)
    env = cli_env(server)
    cache, out = tmp_path / "cache", tmp_path / "runs" / "cancelled"
    journal = out / "results.jsonl"
    args = ["--processes", "3", "--cache-dir", str(cache), "--out", str(out), "--concurrency", "48"]
    returncode, stderr = signal_midway(root, args, env, tmp_path, journal, 60, signal.SIGTERM)
    assert returncode == 128 + signal.SIGTERM, stderr
    assert stderr.strip() == f"interrupted; finish with: evalkit run --resume {out}"
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
    journalled = {line["case_id"] for line in journal_lines(out)}
    assert 60 <= len(journalled) < n

    server.clear_log()  # also resets the in-flight high-water mark
    done = evalkit("run", "--resume", str(out), "--cache-dir", str(cache), "-q", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert server.max_in_flight > 8, "the resumed run keeps the run's concurrency (48), not the default 8"
    manifest, rows = read_run(out)
    assert manifest.status == "complete" and rows.select("case_id", "repeat").n_unique() == n
    again = set(requests_per_case(server.requests)) & journalled
    assert not again, f"cases journalled before SIGTERM were requested again: {sorted(again)}"


def test_a_journal_line_torn_by_a_crash_is_cut_and_its_case_run_again(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    """A journal line torn by a crash is cut off on resume and its case runs again (from the cache)."""
    n = 8
    server, env, out, lines = finished_run(tmp_path, make_suite, make_anthropic_server, n)
    journal = out / "results.jsonl"
    journal.write_text("".join(lines[:5]) + lines[5][:40], encoding="utf-8")
    (out / "results.parquet").unlink()
    again = evalkit(
        "run", "--resume", str(out), "--cache-dir", str(tmp_path / "cache"), "-q", env=env, cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr
    kept = [json.loads(line) for line in lines[:5]]
    now = {line["case_id"]: line for line in journal_lines(out)}
    assert len(now) == n and all(now[k["case_id"]]["finished_at"] == k["finished_at"] for k in kept)
    assert RunDir(out).read_manifest().status == "complete"
    assert len(message_requests(server.requests)) == n  # the rest came from the cache


def test_resume_uses_the_cache_directory_recorded_in_the_manifest(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    n = 12
    server, env, out, lines = finished_run(tmp_path, make_suite, make_anthropic_server, n)
    # a crash after every response was cached but before most results were journalled
    (out / "results.jsonl").write_text("".join(lines[:3]), encoding="utf-8")
    seen = len(server.requests)
    resumed = evalkit("run", "--resume", str(out), "-q", env=env, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert len(journal_lines(out)) == n
    assert message_requests(server.requests[seen:]) == []
    assert not (tmp_path / ".evalkit").exists()


def test_resume_from_another_working_directory_finds_the_suite(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    n = 6
    _, env, out, lines = finished_run(tmp_path, make_suite, make_anthropic_server, n, suite=Path("parity"))
    cache = tmp_path / "cache"
    (out / "results.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resumed = evalkit("run", "--resume", str(out), "--cache-dir", str(cache), "-q", env=env, cwd=elsewhere)
    assert resumed.returncode == 0, resumed.stderr
    assert len(journal_lines(out)) == n


# -- 3. bad inputs: a clear message, a non-zero exit, nothing half-written -------------------------------------


def test_a_corrupt_cache_entry_warns_is_refetched_and_rewritten(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    n = 6
    root = make_suite(n)
    server = make_anthropic_server(responder=parity_responder)
    env = cli_env(server)
    cache = tmp_path / "cache"
    common = ["--system", "claude", "--cache-dir", str(cache), "--runs-dir", str(tmp_path / "runs"), "-q"]
    first = evalkit("run", str(root), *common, env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    entries = sorted(cache.glob("*/*.json"))
    assert len(entries) == n
    victim = entries[0]
    victim_case = case_id(number_of(json.loads(victim.read_text())["request"]["messages"][-1]["content"]))
    victim.write_bytes(b"\x00garbage{not json")
    seen = len(server.requests)

    second = evalkit("run", str(root), *common, env=env, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "Corrupt cache entry" in second.stderr and str(victim) in second.stderr
    assert victim_case in second.stderr
    assert requests_per_case(server.requests[seen:]) == Counter({victim_case: 1})
    rewritten = json.loads(victim.read_text(encoding="utf-8"))
    assert rewritten["key"] == victim.stem and rewritten["response"]["content"]
    runs = run_dirs(tmp_path / "runs")
    assert len(runs) == 2
    (_, a), (_, b) = read_run(runs[0]), read_run(runs[1])
    columns = ["case_id", "case_status", "output", "system_model_version"]
    assert a.sort("case_id").select(columns).equals(b.sort("case_id").select(columns))
    hits = dict(b.select("case_id", "cache_hit").iter_rows())
    assert [cid for cid, hit in hits.items() if not hit] == [victim_case]

    third = evalkit("run", str(root), *common, env=env, cwd=tmp_path)
    assert third.returncode == 0 and "Corrupt" not in third.stderr
    assert len(server.requests) == seen + 1


def test_an_unwritable_cache_directory_exits_2_before_anything_is_written(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    root = make_suite(4)
    server = make_anthropic_server(responder=parity_responder)
    env = cli_env(server)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a regular file\n")
    cache = blocker / "cache"
    runs, out = tmp_path / "runs", tmp_path / "out"
    for where in (["--runs-dir", str(runs)], ["--out", str(out)]):
        proc = run_claude(root, "--cache-dir", str(cache), *where, env=env, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert str(cache) in proc.stderr
        assert "writable directory" in proc.stderr and "--cache off" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert run_dirs(runs) == [] and not out.exists(), "a refused run leaves no run directory"
    assert not (tmp_path / ".evalkit").exists()
    assert blocker.read_text() == "a regular file\n"
    assert server.requests == []

    via_env = dict(env, EVALKIT_CACHE_DIR=str(cache))
    proc = run_claude(root, "--runs-dir", str(runs), env=via_env, cwd=tmp_path)
    assert proc.returncode == 2 and str(cache) in proc.stderr
    assert run_dirs(runs) == []


def test_a_run_directory_that_cannot_be_made_exits_2_before_any_call(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    root = make_suite(4)
    server = make_anthropic_server(responder=parity_responder)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a regular file\n")
    cache = tmp_path / "cache"
    cases = [
        (["--out", str(blocker / "run")], "cannot make the run directory (Not a directory)"),
        (["--out", str(blocker)], "is a file, not a directory"),
        (["--runs-dir", str(blocker)], "cannot make the run directory (Not a directory)"),
    ]
    for where, message in cases:
        proc = run_claude(root, "--cache-dir", str(cache), *where, env=cli_env(server), cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and "choose another --out" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert blocker.read_text() == "a regular file\n"
    assert server.requests == []


def test_a_bad_price_file_exits_2_before_any_call(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    root = make_suite(4)
    server = make_anthropic_server(responder=parity_responder)
    broken = tmp_path / "prices.json"
    broken.write_text('{"claude-sonnet-4-6": {"input": 3}}\n')
    runs = tmp_path / "runs"
    for path, message in [
        (broken, "'input' and 'output' are required"),
        (tmp_path / "missing.json", "No such file or directory"),
    ]:
        env = dict(cli_env(server), EVALKIT_PRICES=str(path))
        proc = run_claude(
            root, "--cache-dir", str(tmp_path / "cache"), "--runs-dir", str(runs), env=env, cwd=tmp_path
        )
        assert proc.returncode == 2, proc.stderr
        assert f"{path} (named by EVALKIT_PRICES)" in proc.stderr and message in proc.stderr
        assert "unset EVALKIT_PRICES" in proc.stderr and "Traceback" not in proc.stderr
    assert run_dirs(runs) == [] and server.requests == []


def test_an_invalid_suite_exits_2_with_located_messages_and_no_run_dir(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    root = make_suite(4)
    lines = (root / "cases.jsonl").read_text().splitlines()
    lines[1] = json.dumps({"id": "c001", "input": "x", "expected": "odd", "grader": "fuzzy"})
    lines[2] = '{"id": "c002", "input": '
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    server = make_anthropic_server(responder=parity_responder)
    runs = tmp_path / "runs"
    where = ["--cache-dir", str(tmp_path / "cache"), "--runs-dir", str(runs)]
    proc = run_claude(root, *where, env=cli_env(server), cwd=tmp_path)
    assert proc.returncode == 2
    cases_file = str(root / "cases.jsonl")
    assert f"{cases_file}:2:" in proc.stderr and "unknown grader" in proc.stderr
    assert f"{cases_file}:3:" in proc.stderr and "invalid JSON" in proc.stderr
    assert "nothing was run" in proc.stderr and "Traceback" not in proc.stderr
    assert run_dirs(runs) == [] and not (tmp_path / "cache").exists()
    assert server.requests == []


def test_an_unknown_system_exits_2_and_leaves_no_run_dir(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    root = make_suite(4)
    server = make_anthropic_server(responder=parity_responder)
    runs = tmp_path / "runs"
    where = ["--cache-dir", str(tmp_path / "cache"), "--runs-dir", str(runs)]
    proc = run_claude(root, *where, env=cli_env(server), cwd=tmp_path, system="gpt-5")
    assert proc.returncode == 2
    assert "unknown system 'gpt-5'" in proc.stderr and "baseline, claude, module:function" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert run_dirs(runs) == [] and server.requests == []


def test_errors_are_summarised_by_kind_with_their_fix_and_cost_nothing(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    """A replay run whose cache lacks two of four cases: the summary says why, how to rerun, and prices no call."""
    server, env, _, _ = finished_run(tmp_path, make_suite, make_anthropic_server, 4)
    cache = tmp_path / "cache"
    for entry in sorted(cache.glob("*/*.json")):
        if json.loads(entry.read_text())["meta"]["case_id"] in (case_id(1), case_id(3)):
            entry.unlink()
    before = len(server.requests)
    proc = run_claude(
        tmp_path / "parity", "--cache", "replay", "--cache-dir", str(cache), env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "  2 cases ended in an error (not scored):" in lines
    kinds = [line for line in lines if line.startswith("    2 x CacheMiss: No cached response for")]
    assert len(kinds) == 1 and f"'case {case_id(1)} repeat 0'" in kinds[0]
    # the fix is whole; under a long temp folder the middle of the path may be cut, never its end
    assert kinds[0].endswith(f"{cache.name}).") and "then commit the cache directory (" in kinds[0]
    spent = next(line for line in lines if line.strip().startswith("spent "))
    assert spent.strip().startswith("spent $0.0000") and "unknown price" not in spent
    run_dir = next(line.split("run saved to ")[1] for line in lines if "run saved to " in line)
    assert f"  to run the 2 errored cases again: evalkit run --resume {run_dir}" in lines
    assert len(server.requests) == before, "replay never calls the API"


# -- 4. the API key is never written -----------------------------------------------------------------------------


def test_the_api_key_never_reaches_the_cache_the_run_dir_or_the_output(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    n = 10
    root = make_suite(n)
    # only the secret key is accepted, so answered requests prove it was sent; with no retries the first
    # three requests' faults make their cases errors, whose messages are journalled (the 429 is waited out)
    server = make_anthropic_server(
        responder=parity_responder,
        api_key=SECRET,
        faults={0: "server_error", 1: "overloaded", 2: "connection_reset", 3: "rate_limit"},
        retry_after=0.05,
    )
    env = cli_env(server, key=SECRET)
    cache, runs = tmp_path / "cache", tmp_path / "runs"
    outputs = []
    where = ["--cache-dir", str(cache), "--runs-dir", str(runs), "--max-retries", "0", "--concurrency", "1"]
    for _ in range(2):  # a first run with errors (progress bar on), then a rerun from the cache
        proc = evalkit("run", str(root), "--system", "claude", *where, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        outputs += [proc.stdout, proc.stderr]
    assert any(r.status == 200 and r.auth is not None for r in server.requests)
    dirs = run_dirs(runs)
    assert len(dirs) == 2
    _, rows = read_run(dirs[0])
    assert rows.filter(pl.col("case_status") == "error").height == 3  # error messages were journalled

    assert all(SECRET not in text for text in outputs)
    files = [p for p in (*cache.rglob("*"), *runs.rglob("*")) if p.is_file()]
    assert {p.name for p in files} >= {"manifest.json", "results.jsonl", "results.parquet"}
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    for run_dir in dirs:
        frame = pl.read_parquet(run_dir / "results.parquet")
        for column in frame.columns:
            values = frame[column].cast(pl.String, strict=False).drop_nulls()
            assert not values.str.contains(SECRET, literal=True).any(), column
    assert not (tmp_path / ".evalkit").exists()


# -- 5. a Claude-system run, then a rerun from the cache --------------------------------------------------------


def test_a_rerun_is_all_cache_hits_with_equal_results_model_version_and_cost(
    make_suite: Callable[..., Path],
    tmp_path: Path,
    make_anthropic_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("EVALKIT_PRICES", raising=False)
    n = 20
    suite = load_suite(make_suite(n))
    system = load_system("claude", suite)
    server = make_anthropic_server(responder=parity_responder, models=RESOLVED)
    client = Client(base_url=server.base_url, api_key=KEY)
    opts = RunOptions(out_root=tmp_path / "runs", cache_dir=tmp_path / "cache", progress=False)
    first = Runner(suite, system, opts, client=client).run()
    assert len(message_requests(server.requests)) == n
    seen = len(server.requests)
    second = Runner(suite, system, opts, client=client).run()
    assert server.requests[seen:] == [], "a rerun is answered from the cache"
    assert second.run_dir != first.run_dir
    assert second.totals.cache_hits == n and second.totals.spent_usd == 0.0

    price = pricing.price_for("claude-sonnet-4-6")
    assert price is not None
    (_, a), (_, b) = read_run(first.run_dir), read_run(second.run_dir)
    columns = [
        "case_id",
        "case_status",
        "output",
        "output_hash",
        "status",
        "system_model_version",
        "cost_usd",
    ]
    assert a.sort("case_id").select(columns).equals(b.sort("case_id").select(columns))
    assert a["cache_hit"].to_list() == [False] * n and b["cache_hit"].to_list() == [True] * n
    for r in first.results:
        assert r.system_model == "claude-sonnet-4-6"
        assert r.system_model_version == RESOLVED["claude-sonnet-4-6"]
        assert r.input_tokens and r.output_tokens and r.cost_usd is not None
        expected = (r.input_tokens * price.input + r.output_tokens * price.output) / 1_000_000
        assert r.cost_usd == pytest.approx(expected)
    assert sorted(a["case_status"].unique()) == ["fail", "pass"]

    # a model the price table does not know: the cost is unknown (None), never zero
    odd = load_suite(make_suite(4, model="claude-experimental-0", name="unpriced"))
    opts = RunOptions(out_root=tmp_path / "runs", cache_dir=tmp_path / "cache", progress=False)
    unknown = Runner(odd, load_system("claude", odd), opts, client=client).run()
    client.close()
    assert [r.cost_usd for r in unknown.results] == [None] * 4
    assert {r.system_model_version for r in unknown.results} == {"claude-experimental-0"}
    assert unknown.totals.unknown_cost == 4 and unknown.totals.spent_usd == 0.0
    _, rows = read_run(unknown.run_dir)
    assert rows["cost_usd"].null_count() == 4


# -- the local server's own latency floor -------------------------------------------------------------------------


def test_a_local_round_trip_takes_milliseconds_not_a_delayed_ack(make_anthropic_server: Any) -> None:
    server = make_anthropic_server()
    request = {"model": "claude-sonnet-4-6", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    with Client(base_url=server.base_url, api_key=KEY) as client:
        client.create(request)  # connect
        times = []
        for _ in range(10):
            started = time.perf_counter()
            client.create(request)
            times.append(time.perf_counter() - started)
    assert statistics.median(times) < 0.015, f"median round trip {statistics.median(times) * 1000:.1f} ms"


def test_an_auth_failure_stops_the_run_with_the_fix(tmp_path: Path, make_anthropic_server: Any) -> None:
    from evalkit.errors import EvalkitError

    server = make_anthropic_server(api_key="the-right-key")
    suite = load_suite(Path(__file__).resolve().parents[2] / "goldens" / "support-triage")
    client = Client(base_url=server.base_url, api_key="a-wrong-key", max_retries=0)
    opts = RunOptions(progress=False, cache_dir=tmp_path / "cache", out_root=tmp_path / "runs", judge="off")
    with pytest.raises(EvalkitError, match="ANTHROPIC_API_KEY") as info:
        Runner(suite, load_system("claude", suite), opts, client=client).run()
    # bad credentials are bad input: nothing was done, so nothing is left to resume
    assert str(info.value).endswith("then: run the same command again")
    assert list((tmp_path / "runs").iterdir()) == []
    # it stopped at the first refusal instead of recording one error per case
    assert len(server.requests_to("/v1/messages")) < len(suite.cases) // 2


def test_an_auth_failure_midway_keeps_the_run_to_resume(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    """Once some cases are done, a refused key stops the run with the resume command, the key not written."""
    from evalkit.errors import EvalkitError

    server = make_anthropic_server(responder=parity_responder, api_key="the-right-key")
    root = make_suite(6)
    suite = load_suite(root)
    opts = RunOptions(progress=False, cache_dir=tmp_path / "cache", out_root=tmp_path / "runs", concurrency=1)
    good = Client(base_url=server.base_url, api_key="the-right-key", max_retries=0)
    first = Runner(suite, load_system("claude", suite), opts, client=good).run()
    (first.run_dir / "results.jsonl").write_text(
        "".join((first.run_dir / "results.jsonl").read_text().splitlines(keepends=True)[:3])
    )
    import shutil

    shutil.rmtree(tmp_path / "cache")
    bad = Client(base_url=server.base_url, api_key="a-wrong-key", max_retries=0)
    with pytest.raises(EvalkitError, match="--resume"):
        Runner(suite, load_system("claude", suite), opts, client=bad).run(resume=first.run_dir)
    assert json.loads((first.run_dir / "manifest.json").read_text())["status"] in ("interrupted", "complete")
    assert "a-wrong-key" not in (first.run_dir / "results.jsonl").read_text()


def test_a_run_that_cannot_connect_stops_with_the_fix_and_resumes(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    import socket

    root = make_suite(40)
    with socket.socket() as probe:  # a port with nothing listening on it
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    server = make_anthropic_server(responder=parity_responder)
    out = tmp_path / "runs" / "r1"
    where = ["--cache-dir", str(tmp_path / "cache"), "--out", str(out), "--max-retries", "0"]
    proc = run_claude(root, *where, env=dict(cli_env(server), ANTHROPIC_BASE_URL=closed), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"could not connect to {closed}: the first 8 calls failed" in proc.stderr
    assert "Connection refused" in proc.stderr and f"evalkit run --resume {out}" in proc.stderr
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
    assert len(journal_lines(out)) < 40, "it stopped instead of recording an error for every case"

    resumed = evalkit("run", "--resume", str(out), "-q", env=cli_env(server), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"
    _, rows = read_run(out)
    assert rows.filter(pl.col("case_status") == "error").is_empty()
    assert rows.select("case_id", "repeat").n_unique() == 40
    assert sorted(requests_per_case(message_requests(server.requests)).values()) == [1] * 40


def test_a_cache_entry_that_cannot_be_written_keeps_the_calls_cost_in_one_process_as_in_workers(
    make_suite: Callable[..., Path],
    tmp_path: Path,
    make_anthropic_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The call was made and paid for: its error result records what it cost, whichever way the run ran."""
    from evalkit._cache import ResponseCache
    from evalkit._runner import Runner, RunOptions
    from evalkit._systems import load_system
    from evalkit.suite import load_suite

    server = make_anthropic_server(responder=parity_responder)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    real = ResponseCache.put

    def full_for_c001(self: ResponseCache, key: str, endpoint: str, request: Any, *a: Any, **kw: Any) -> None:
        if user_turn(1) in json.dumps(request):
            raise OSError(28, "No space left on device")
        real(self, key, endpoint, request, *a, **kw)

    monkeypatch.setattr(ResponseCache, "put", full_for_c001)
    suite = load_suite(make_suite(4))
    opts = RunOptions(out_root=tmp_path / "runs", cache_dir=tmp_path / "cache", progress=False, processes=1)
    outcome = Runner(suite, load_system("claude", suite), opts).run()
    (error,) = [r for r in outcome.results if r.status == "error"]
    assert error.case_id == case_id(1) and "No space left" in (error.error or "")
    assert error.cost_usd is not None and error.cost_usd > 0 and error.input_tokens
    assert outcome.totals.spent_usd == pytest.approx(sum(r.cost_usd or 0 for r in outcome.results))


def test_a_negative_max_retries_is_a_usage_error(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    proc = evalkit("run", str(make_suite(2)), "--max-retries", "-1", env=dict(os.environ), cwd=tmp_path)
    assert proc.returncode == 2 and "--max-retries: must be 0 or more" in proc.stderr
    assert not (tmp_path / "runs").exists()


def test_ctrl_c_with_worker_processes_journals_the_calls_in_flight(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any
) -> None:
    """Ctrl-C reaches every process of the run: the calls in flight finish and are journalled, so every response
    in the cache has its result, and the resume pays for the rest without counting any of them as a cache hit."""
    root = make_suite(200)
    server = make_anthropic_server(responder=parity_responder, latency=0.3)
    env = cli_env(server)
    out = tmp_path / "runs" / "r1"
    cache = tmp_path / "cache"
    args = ["--cache-dir", str(cache), "--out", str(out), "--concurrency", "40", "--processes", "2"]
    code, err = signal_midway(root, args, env, tmp_path, out / "results.jsonl", 50, signal.SIGINT, group=True)
    assert code == 130, err
    journalled = {json.loads(line)["case_id"] for line in (out / "results.jsonl").read_text().splitlines()}
    assert journalled == cached_cases(cache) and 50 <= len(journalled) < 200
    proc = evalkit("run", "--resume", str(out), "-q", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "cache hits 0/200" in proc.stdout
