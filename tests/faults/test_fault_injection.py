"""Fault injection: a run killed (SIGKILL) or failed by its disk at each phase, then resumed.

Each scenario runs `evalkit run` against the local server with ``EVALKIT_FAILPOINT`` naming where the process
dies (see evalkit/_failpoints.py): at the start, after the Nth journalled case, while a cache entry is written,
as the finish starts and after results.parquet is written; in one process and with worker processes; or where a
full or read-only disk raises. Then ``evalkit run --resume`` must complete the run, every case exactly once in its
results, with no case paid twice: a case whose response was cached before the crash is never requested again.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalkit._results import read_run
from evalkit.testing.server import last_user_text

pytestmark = pytest.mark.faults

N = 24


def _number(text: str) -> int:
    found = re.search(r"c(\d{3})", text)
    assert found, text
    return int(found.group(1))


def _parity(body: dict[str, Any]) -> str:
    return "even" if _number(last_user_text(body)) % 2 == 0 else "odd"


def _settled(server: Any, quiet_s: float = 0.3, limit_s: float = 10.0) -> None:
    """Wait until the server has answered every request it received and no new one came for `quiet_s`: a killed
    client's last requests may still be in its socket or being answered, and are paid all the same."""
    deadline = time.monotonic() + limit_s
    seen, since = len(server.requests), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = len(server.requests)
        if now != seen or server.in_flight:
            seen, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return


def _paid(server: Any) -> Counter[int]:
    """Requests the server answered, per case number (count_tokens and the like left out)."""
    return Counter(
        _number(last_user_text(r.body))
        for r in server.requests
        if r.path.endswith("/messages") and r.status == 200 and isinstance(r.body, dict)
    )


def _cached(cache: Path) -> set[int]:
    found = set()
    for path in cache.glob("*/*.json"):
        entry = json.loads(path.read_text(encoding="utf-8"))
        found.add(_number(entry["request"]["messages"][-1]["content"]))
    return found


def _evalkit(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalkit.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture
def setup(make_suite: Callable[..., Path], make_anthropic_server: Any, tmp_path: Path) -> dict[str, Any]:
    server = make_anthropic_server(responder=_parity)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALKIT_", "ANTHROPIC_"))}
    env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="sk-ant-local-test-key")
    return {
        "suite": make_suite(N),
        "server": server,
        "env": env,
        "cache": tmp_path / "cache",
        "out": tmp_path / "runs" / "r",
        "cwd": tmp_path,
    }


def _crash_then_resume(s: dict[str, Any], failpoint: str, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [
        "run",
        str(s["suite"]),
        "--system",
        "claude",
        "--out",
        str(s["out"]),
        "--cache-dir",
        str(s["cache"]),
    ]
    crashed = _evalkit(*args, *extra, "-q", env={**s["env"], "EVALKIT_FAILPOINT": failpoint}, cwd=s["cwd"])
    cached_at_crash = _cached(s["cache"])
    _settled(s["server"])  # what the crashed run sent is counted as its own, even if answered after it died
    paid_at_crash = _paid(s["server"])
    done = _evalkit("run", "--resume", str(s["out"]), "-q", env=s["env"], cwd=s["cwd"])
    assert done.returncode == 0, f"{failpoint}: the resume failed\n{done.stdout}\n{done.stderr}"
    manifest, rows = read_run(s["out"])
    assert manifest.status == "complete"
    assert sorted(rows.get_column("case_id").to_list()) == [f"c{i:03d}" for i in range(N)]
    assert rows.filter(rows.get_column("case_status") == "error").is_empty()
    journal = (s["out"] / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(journal) == N, "the journal is compacted to one line per case"
    paid = _paid(s["server"])
    assert set(paid) == set(range(N)), "every case was answered once at least"
    for case, times in paid.items():
        # a case cached before the crash is read from the cache; one in flight may be asked again, once
        assert times == 1 or (times == 2 and case not in cached_at_crash and paid_at_crash[case] == 1), (
            f"{failpoint}: case {case} paid {times} times"
        )
    return crashed


KILLS = [
    "run:started",
    "case:journalled@1",
    "case:journalled@12",
    "cache:written@5",
    "finish:started",
    "finish:parquet",
]


@pytest.mark.parametrize("failpoint", KILLS)
def test_a_run_killed_at_each_phase_resumes_with_no_case_paid_twice(
    setup: dict[str, Any], failpoint: str
) -> None:
    crashed = _crash_then_resume(setup, failpoint)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr


@pytest.mark.parametrize("failpoint", ["case:journalled@12", "cache:written@5", "finish:parquet"])
def test_a_run_with_workers_killed_resumes_with_no_case_paid_twice(
    setup: dict[str, Any], failpoint: str
) -> None:
    # a worker dying is the worker's kill; the run stops, says how to resume, and the resume finishes it
    crashed = _crash_then_resume(setup, failpoint, "--processes", "2", "--concurrency", "32")
    assert crashed.returncode != 0


@pytest.mark.parametrize(
    "failpoint",
    ["finish:started=ENOSPC", "finish:parquet=EROFS", "cache:written@3=ENOSPC", "run:started=EROFS"],
)
def test_a_full_or_read_only_disk_stops_the_run_with_its_resume_command(
    setup: dict[str, Any], failpoint: str
) -> None:
    crashed = _crash_then_resume(setup, failpoint)
    assert crashed.returncode != 0
    assert "Traceback" not in crashed.stderr, crashed.stderr
    assert "No space left on device" in crashed.stderr + crashed.stdout or "Read-only" in crashed.stderr + (
        crashed.stdout
    )


def test_a_resume_with_nothing_left_to_run_finishes(setup: dict[str, Any]) -> None:
    s = setup
    args = [
        "run",
        str(s["suite"]),
        "--system",
        "claude",
        "--out",
        str(s["out"]),
        "--cache-dir",
        str(s["cache"]),
    ]
    first = _evalkit(*args, "-q", env=s["env"], cwd=s["cwd"])
    assert first.returncode == 0, first.stderr
    paid = len(s["server"].requests)
    again = _evalkit("run", "--resume", str(s["out"]), "-q", env=s["env"], cwd=s["cwd"])
    assert again.returncode == 0, again.stderr
    assert len(s["server"].requests) == paid
    assert read_run(s["out"])[0].status == "complete"


def test_a_torn_journal_line_and_a_torn_cache_entry_are_redone_once(setup: dict[str, Any]) -> None:
    s = setup
    _crash_then_resume(s, "finish:started")
    # tear the last journal line and one cache entry, mark the run interrupted, and resume: only those are redone
    journal = s["out"] / "results.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    journal.write_text("".join(lines[:-1]) + lines[-1][:40], encoding="utf-8")
    torn_case = json.loads(lines[-1])["case_id"]
    entry = next(iter(sorted(s["cache"].glob("*/*.json"))))
    entry.write_bytes(entry.read_bytes()[:50])
    manifest = json.loads((s["out"] / "manifest.json").read_text(encoding="utf-8"))
    manifest["status"] = "interrupted"
    (s["out"] / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    before = len(s["server"].requests)
    done = _evalkit("run", "--resume", str(s["out"]), "-q", env=s["env"], cwd=s["cwd"])
    assert done.returncode == 0, done.stderr
    asked = {_number(last_user_text(r.body)) for r in s["server"].requests[before:]}
    assert asked <= {int(torn_case[1:])}, (
        "only the torn case may be asked again (its entry, if torn, refetched)"
    )
    _, rows = read_run(s["out"])
    assert sorted(rows.get_column("case_id").to_list()) == [f"c{i:03d}" for i in range(N)]
