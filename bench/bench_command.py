"""Time the whole `evalkit run` command, as a user starts it: a fresh process, start-up and exit included.

Run with ``.venv/bin/python bench/bench_command.py``. Every figure prints with its ratio to a stated ideal or target:

1. Cold: ``evalkit run --system claude --cache off`` as a subprocess (stdout a pipe), 1,000 cases, concurrency 50,
   against the local server (in its own process) answering each request after 100 ms. The ideal is
   ceil(N / C) x latency = 2.0 s; the target is <= 1.3 x ideal.
2. Warm: the same 1,000 cases from a filled response cache (``--cache readwrite``, every response a hit), grading
   and the run directory included; the target is <= 0.8 s for the whole process.

A gauge of how busy the host is comes first: the same 1,000 requests sent by a plain standard-library client
(50 threads, one keep-alive connection each, no SDK), as a ratio to the same ideal. Then the floor of anything
that sends through the SDK: a process that imports it and sends the same requests from 50 threads through one
SDK client; the cold figure is printed as a ratio to it too. Compare a figure only with
one taken on the same machine at a similar gauge; to compare two commits, give the other checkout with
``--peer PATH`` (e.g. ``git worktree add /tmp/peer main``, or ``git archive main | tar -x -C /tmp/peer``): the
runs of both alternate, against the same server, so a change in the host's load hits both alike.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_runner import API_KEY, ServerProcess, write_suite

CASES = 1_000
CONCURRENCY = 50
LATENCY_S = 0.100
COLD_TARGET = 1.3
WARM_TARGET_S = 0.8
REPEATS = 3
ROOT = Path(__file__).resolve().parent.parent


def machine() -> str:
    """The load average and the commit, to print with the figures."""
    try:
        load = Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        load = [f"{x:.2f}" for x in os.getloadavg()]
    root = ROOT
    commit = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return (
        f"loadavg {' '.join(load)}; {os.cpu_count()} cores; commit {commit}{' (modified)' if dirty else ''}"
    )


def stdlib_client(base_url: str, n: int, concurrency: int) -> float:
    """Seconds for n requests from `concurrency` threads over http.client: the host's floor for the same work."""
    url = urlsplit(base_url)
    body = json.dumps(
        {"model": "claude-sonnet-4-6", "max_tokens": 4, "messages": [{"role": "user", "content": "number 1"}]}
    ).encode()
    headers = {"content-type": "application/json", "x-api-key": API_KEY, "anthropic-version": "2023-06-01"}
    left = iter(range(n))
    lock = threading.Lock()

    def worker() -> None:
        conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
        try:
            while True:
                with lock:
                    if next(left, None) is None:
                        return
                conn.request("POST", "/v1/messages", body, headers)
                reply = conn.getresponse()
                data = reply.read()
                assert reply.status == 200, data
                json.loads(data)
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


_SDK_FLOOR = r"""
import sys, threading
import anthropic, httpx2
base_url, n, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
client = anthropic.Anthropic(
    base_url=base_url, api_key="sk-ant-bench-local", max_retries=0,
    http_client=anthropic.DefaultHttpxClient(limits=limits),
)
left = iter(range(n))
lock = threading.Lock()

def worker():
    while True:
        with lock:
            i = next(left, None)
        if i is None:
            return
        reply = client.messages.create(
            model="claude-sonnet-4-6", max_tokens=4, messages=[{"role": "user", "content": f"number {i}"}]
        )
        assert reply.content

threads = [threading.Thread(target=worker) for _ in range(concurrency)]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""


def sdk_floor(base_url: str, n: int, concurrency: int) -> float:
    """Seconds for a whole process that imports the SDK and sends n requests from `concurrency` threads through
    one SDK client: the floor for any tool whose requests go through the SDK, as evalkit's do."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", _SDK_FLOOR, base_url, str(n), str(concurrency)],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def evalkit_run(
    suite: Path, runs: Path, base_url: str, cache: Path, mode: str, tree: Path = ROOT
) -> tuple[float, str]:
    """Seconds for the whole `evalkit run` process, from spawn to exit, and its stdout (a pipe, read to the end).

    `tree` is the checkout whose evalkit runs (another worktree, to compare with a peer)."""
    env = dict(os.environ, ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY=API_KEY, PYTHONPATH=str(tree))
    env.pop("EVALKIT_PRICES", None)
    # as an installed evalkit runs: its modules compiled once, not again in every command (0.1 s of each)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    argv = [sys.executable, "-m", "evalkit.cli", "run", str(suite), "--system", "claude", "--cache", mode]
    argv += ["--cache-dir", str(cache), "--concurrency", str(CONCURRENCY), "--judge", "off", "-q"]
    argv += ["--runs-dir", str(runs)]
    started = time.perf_counter()
    # run from the tree itself: `python -m` puts the working directory first on sys.path, so from this checkout a
    # peer's command would import this checkout's evalkit
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, cwd=tree)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0 or "run saved to" not in proc.stdout:
        raise RuntimeError(f"evalkit run exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return elapsed, proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"runs of each kind (default {REPEATS})")
    parser.add_argument(
        "--peer",
        type=Path,
        help="another checkout (a worktree of another commit) to time the same way, interleaved (default: none)",
    )
    args = parser.parse_args(argv)
    ideal = math.ceil(CASES / CONCURRENCY) * LATENCY_S
    print(
        f"evalkit run, whole process: {CASES} cases, concurrency {CONCURRENCY}, latency {LATENCY_S * 1000:.0f} ms"
    )
    print(f"  {machine()}")
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-command-") as tmp:
        work = Path(tmp)
        suite = write_suite(work / "suite", CASES)
        server = ServerProcess(LATENCY_S)
        try:
            gauges = [stdlib_client(server.base_url, CASES, CONCURRENCY) for _ in range(args.repeats)]
            gauge = statistics.median(gauges)
            print(
                f"stdlib client alone (the host's gauge): {gauge:.2f} s = {gauge / ideal:.2f} x ideal "
                f"(median of {', '.join(f'{g:.2f}' for g in gauges)} s)"
            )
            floors = [sdk_floor(server.base_url, CASES, CONCURRENCY) for _ in range(args.repeats)]
            floor = statistics.median(floors)
            print(
                f"the SDK alone, whole process (import, {CONCURRENCY} threads, one client): {floor:.2f} s = "
                f"{floor / ideal:.2f} x ideal (median of {', '.join(f'{g:.2f}' for g in floors)} s)"
            )
            trees = [("this checkout", ROOT)] + ([("peer", args.peer.resolve())] if args.peer else [])
            if args.peer:
                print("  " + "; ".join(f"{label}: {tree}" for label, tree in trees))
            colds: dict[str, list[float]] = {label: [] for label, _ in trees}
            warms: dict[str, list[float]] = {label: [] for label, _ in trees}
            for i in range(args.repeats):  # interleaved, so a change in the host's load hits both alike
                for label, tree in trees:
                    cache = work / f"cold-{label}-{i}"
                    seconds, _ = evalkit_run(suite, work / "runs", server.base_url, cache, "off", tree)
                    colds[label].append(seconds)
            for label, tree in trees:  # fills each cache, not timed
                evalkit_run(suite, work / "runs", server.base_url, work / f"warm-{label}", "readwrite", tree)
            for _ in range(args.repeats):
                for label, tree in trees:
                    cache = work / f"warm-{label}"
                    seconds, out = evalkit_run(
                        suite, work / "runs", server.base_url, cache, "readwrite", tree
                    )
                    assert f"cache hits {CASES}/{CASES}" in out, out
                    warms[label].append(seconds)
            for label, _ in trees:
                prefix = f"{label}: " if args.peer else ""
                cold = statistics.median(colds[label])
                verdict = "ok" if cold / ideal <= COLD_TARGET else "MISSED"
                print(
                    f"{prefix}cold `evalkit run --cache off`: {cold:.2f} s = {cold / ideal:.2f} x ideal ({ideal:.1f} s "
                    f"= ceil({CASES}/{CONCURRENCY}) x {LATENCY_S * 1000:.0f} ms); target <= {COLD_TARGET} [{verdict}]  "
                    f"(median of {', '.join(f'{s:.2f}' for s in colds[label])} s); {cold / floor:.2f} x the SDK alone"
                )
                warm = statistics.median(warms[label])
                verdict = "ok" if warm <= WARM_TARGET_S else "MISSED"
                print(
                    f"{prefix}warm `evalkit run` (every response from the cache): {warm:.2f} s = "
                    f"{warm / WARM_TARGET_S:.2f} x the {WARM_TARGET_S} s target [{verdict}]  "
                    f"(median of {', '.join(f'{s:.2f}' for s in warms[label])} s)"
                )
        finally:
            server.stop()
    print(f"  {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
