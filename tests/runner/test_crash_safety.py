"""A crash that loses nothing: killed runs, dead parents, a cache gone read-only and full disks, end to end.

Each test runs `python -m evalkit.cli run` against the local server (loopback, through the real SDK) and counts,
from the server's request log, how many answered calls a resume had to pay for again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evalkit._results import RunDir, read_run
from evalkit.testing.server import LocalAnthropicServer, last_user_text

# end-to-end: real processes, servers or kernels (`pytest -m 'not slow'` leaves them out while working)
pytestmark = pytest.mark.slow

MESSAGES = "/v1/messages"


def parity(body: dict[str, Any]) -> str:
    return "even" if int(last_user_text(body).rsplit("c", 1)[-1]) % 2 == 0 else "odd"


def requests_per_case(server: LocalAnthropicServer) -> Counter[str]:
    records = server.requests_to(MESSAGES)
    return Counter(last_user_text(r.body).split()[-1] for r in records if isinstance(r.body, dict))


def repaid(server: LocalAnthropicServer) -> int:
    """Calls made more than once for the same case: answered (and paid) once, then asked again."""
    return sum(n - 1 for n in requests_per_case(server).values())


def cli_env(server: LocalAnthropicServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EVALKIT_CACHE_DIR", "EVALKIT_PRICES")}
    env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="k", PYTHONUNBUFFERED="1")
    return env


def run_argv(suite: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "evalkit.cli",
        "run",
        str(suite),
        "--system",
        "claude",
        "--judge",
        "off",
        *args,
        "-q",
    ]


def resume(run_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "evalkit.cli", "run", "--resume", str(run_dir), "-q"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180)


def wait_for(
    condition: Callable[[], bool], seconds: float, proc: subprocess.Popen[str] | None = None
) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        assert proc is None or proc.poll() is None, "the run ended first"
        time.sleep(0.01)


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def mount(path: Path, options: str) -> None:
    subprocess.run(["mount", "-o", options, "tmpfs", str(path)], check=True, capture_output=True)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """`tmpfs("200k")`: a new directory with a tmpfs of that size mounted on it (skips where mount is refused)."""
    mounted: list[Path] = []

    def make(size: str) -> Path:
        path = tmp_path / f"tmpfs{len(mounted)}"
        path.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, text=True
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}); needs root")
        mounted.append(path)
        return path

    if not sys.platform.startswith("linux"):
        pytest.skip("tmpfs mounts are Linux's")
    yield make
    for path in mounted:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


# -- 1 and 2. SIGKILL of a worker-mode run: of the whole run, or of the parent only ------------------------------


@pytest.mark.skipif(not Path("/proc").exists(), reason="reads process state from /proc")
@pytest.mark.parametrize("kill", ["group", "parent"])
def test_a_killed_worker_run_pays_again_for_at_most_the_calls_in_flight(
    make_suite: Callable[..., Path], tmp_path: Path, make_anthropic_server: Any, kill: str
) -> None:
    n, concurrency = 600, 32
    suite = make_suite(n)
    server = make_anthropic_server(responder=parity, latency=0.03)
    env = cli_env(server)
    run_dir = tmp_path / "run"
    argv = run_argv(
        suite,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(run_dir),
        "--concurrency",
        str(concurrency),
    )
    proc = subprocess.Popen(
        [*argv, "--processes", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for(lambda: len(server.requests_to(MESSAGES)) >= n // 2, 90, proc)
        workers = children(proc.pid)
        assert len(workers) == 2
        if kill == "group":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.wait(timeout=10)
        killed_at = time.monotonic()
        wait_for(lambda: not any(alive(w) for w in workers), 5)
        gone_after = time.monotonic() - killed_at
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert gone_after < 5, f"worker processes outlived their parent by {gone_after:.1f} s"
    asked_before = len(server.requests_to(MESSAGES))
    assert asked_before < n, "the run finished before it was killed"
    done = resume(run_dir, env)  # refused while a worker still held the run's lock
    assert done.returncode == 0, done.stderr
    assert RunDir(run_dir).read_manifest().status == "complete"
    _, rows = read_run(run_dir)
    assert rows["case_id"].n_unique() == n
    assert set(requests_per_case(server)) == {f"c{i:03d}" for i in range(n)}
    again = repaid(server)
    print(f"kill={kill}: {asked_before} calls before the kill, {again} paid again on resume")
    assert again <= concurrency


# -- 3. the cache directory becomes read-only mid-run ------------------------------------------------------------


@pytest.mark.parametrize("processes", [1, 2])
def test_a_cache_made_read_only_mid_run_stops_the_run_with_its_resume_command(
    make_suite: Callable[..., Path],
    tmp_path: Path,
    make_anthropic_server: Any,
    tmpfs: Callable[[str], Path],
    processes: int,
) -> None:
    n, concurrency = 400, 8
    cache = tmpfs("8m")
    suite = make_suite(n)
    server = make_anthropic_server(responder=parity, latency=0.01)
    run_dir = tmp_path / "run"
    argv = run_argv(
        suite,
        *("--cache-dir", str(cache), "--out", str(run_dir), "--concurrency", str(concurrency)),
        *("--processes", str(processes)),
    )
    proc = subprocess.Popen(
        argv, env=cli_env(server), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for(lambda: len(server.requests_to(MESSAGES)) >= 100, 90, proc)
        deadline = time.monotonic() + 10
        while True:  # refused (busy) while a cache entry is open for writing: try again
            done = subprocess.run(["mount", "-o", "remount,ro", str(cache)], capture_output=True, text=True)
            if done.returncode == 0 or time.monotonic() > deadline:
                break
        assert done.returncode == 0, done.stderr
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 2, stderr
    assert "could not cache" in stderr and str(cache) in stderr and "Read-only file system" in stderr
    assert f"evalkit run --resume {run_dir}" in stderr
    assert "Traceback" not in stderr
    assert RunDir(run_dir).read_manifest().status == "interrupted"
    asked = len(server.requests_to(MESSAGES))
    cached = sum(1 for _ in cache.glob("*/*.json"))
    assert asked < n, "every case was still asked for"
    assert asked - cached <= concurrency  # paid for and not kept: only the calls in flight when it failed
    mount(cache, "remount,rw")
    again = resume(run_dir, cli_env(server))
    assert again.returncode == 0, again.stderr
    _, rows = read_run(run_dir)
    assert rows["case_id"].n_unique() == n and rows.filter(rows["case_status"] == "error").height == 0
    print(
        f"processes={processes}: {asked} calls before the stop, {asked - cached} not cached, {repaid(server)} paid again"
    )
    assert repaid(server) <= concurrency


# -- 4. the disk under the journal, or under the cache, fills up -------------------------------------------------


@pytest.mark.parametrize("full", ["journal", "cache"])
def test_a_full_disk_is_a_located_message_exit_2_and_an_interrupted_run(
    make_suite: Callable[..., Path],
    tmp_path: Path,
    make_anthropic_server: Any,
    tmpfs: Callable[[str], Path],
    full: str,
) -> None:
    n, concurrency = 400, 8
    disk = tmpfs("200k")
    suite = make_suite(n)
    server = make_anthropic_server(responder=parity)
    run_dir = disk / "run" if full == "journal" else tmp_path / "run"
    cache = disk / "cache" if full == "cache" else tmp_path / "cache"
    argv = run_argv(
        suite, "--cache-dir", str(cache), "--out", str(run_dir), "--concurrency", str(concurrency)
    )
    first = subprocess.run(argv, env=cli_env(server), capture_output=True, text=True, timeout=120)
    assert first.returncode == 2, first.stderr
    assert "Traceback" not in first.stderr
    assert "No space left on device" in first.stderr
    where = run_dir / "results.jsonl" if full == "journal" else cache
    assert str(where) in first.stderr
    assert f"evalkit run --resume {run_dir}" in first.stderr
    assert RunDir(run_dir).read_manifest().status == "interrupted"
    asked = len(server.requests_to(MESSAGES))
    assert asked < n
    mount(disk, "remount,size=16m")
    again = resume(run_dir, cli_env(server))
    assert again.returncode == 0, again.stderr
    assert RunDir(run_dir).read_manifest().status == "complete"
    _, rows = read_run(run_dir)
    assert rows["case_id"].n_unique() == n and rows.filter(rows["case_status"] == "error").height == 0
    print(f"{full} full: {asked} calls before the stop, {repaid(server)} paid again")
    assert repaid(server) <= concurrency
