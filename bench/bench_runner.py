"""Time the runner against its ideals: a cold Claude run, a warm-cache rerun, and the memory of a 10,000-case run.

Run with ``.venv/bin/python bench/bench_runner.py``. Every figure prints with its ratio to a stated ideal or target:

1. Cold run: 1,000 cases through the Claude system, concurrency 50, a fresh cache, against the local
   Anthropic-compatible server (in its own process, so its CPU does not share the runner's GIL) answering each
   request after 100 ms. The ideal is ceil(N / C) x latency = 2.0 s; the target is <= 1.15 x ideal. The median
   of three runs is reported, each with a fresh cache.
2. Warm rerun: the same 1,000 cases again, every response a cache hit, grading and the run directory included.
   Per-case time (median of three reruns) against the 1 ms target.
3. Memory: 10,000 cases through a Python system (a baseline.py; no API) in a fresh interpreter; its peak RSS
   (VmHWM from /proc/self/status, ``resource.getrusage`` where there is no /proc) against 300 MB.
   ``--memory-system claude`` runs the 10,000 cases as a warm-cache Claude run instead (the cache is filled
   first, unmeasured).

Two reference lines put the cold run in context: the local server's round trip at zero latency (anything above a
millisecond or two is the server's, and is paid once per wave of requests), and the client alone sending the
same 1,000 requests from 50 threads with no cache, grading or journal (what the runner adds is the difference).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from evalkit._client import Client
from evalkit._runner import Runner, RunOptions
from evalkit._systems import ClaudeSystem, load_system
from evalkit.suite import load_suite

CASES = 1_000
CONCURRENCY = 50
LATENCY_S = 0.100
COLD_TARGET = 1.15
WARM_TARGET_S = 0.001
MEMORY_CASES = 10_000
MEMORY_TARGET_MB = 300.0
API_KEY = "sk-ant-bench-local"
REPEATS = 3


def write_suite(root: Path, n: int) -> Path:
    """n cases, each with an exact check and two code checks; a prompt.md and a baseline.py."""
    root.mkdir(parents=True)
    lines = []
    for i in range(n):
        checks = [
            {
                "kind": "exact",
                "expected": "even" if i % 2 == 0 else "odd",
                "normalize": ["strip", "casefold"],
            },
            {"kind": "max_words", "limit": 3},
            {"kind": "regex", "pattern": r"^(even|odd)$", "flags": "i"},
        ]
        slice_ = f"s{i % 10}"
        lines.append(
            json.dumps({"id": f"b{i:05d}", "input": f"number {i}", "slice": slice_, "checks": checks})
        )
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "suite.toml").write_text(
        'name = "bench"\n\n[model]\nname = "claude-sonnet-4-6"\nmax_tokens = 4\n', encoding="utf-8"
    )
    (root / "prompt.md").write_text("Is the number even or odd? Answer with one word.\n", encoding="utf-8")
    (root / "baseline.py").write_text(
        "def predict(input):\n    n = int(input.split()[-1])\n    return 'even' if n % 2 == 0 else 'odd'\n",
        encoding="utf-8",
    )
    return root


class ServerProcess:
    """``python -m evalkit.testing.server._server`` in a child process, answering every message with "even"."""

    def __init__(self, latency: float) -> None:
        argv = [sys.executable, "-m", "evalkit.testing.server"]
        argv += ["--port", "0", "--latency", str(latency), "--text", "even"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            self.stop()
            raise RuntimeError("the local server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def round_trip_ms(base_url: str, calls: int = 20) -> float:
    """The median time of one request to the server at zero latency, on a warm connection."""
    request = {"model": "claude-sonnet-4-6", "max_tokens": 4, "messages": [{"role": "user", "content": "0"}]}
    with Client(base_url=base_url, api_key=API_KEY) as client:
        client.create(request)
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            client.create(request)
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def timed_run(suite_root: Path, work: Path, base_url: str, cache: Path, name: str) -> tuple[float, Any]:
    suite = load_suite(suite_root)
    options = RunOptions(
        concurrency=CONCURRENCY, cache_dir=cache, run_dir=work / "runs" / name, progress=False, judge="off"
    )
    # the runner builds its own client from the environment, as `evalkit run` does (and so picks its processes)
    os.environ["ANTHROPIC_BASE_URL"], os.environ["ANTHROPIC_API_KEY"] = base_url, API_KEY
    runner = Runner(suite, load_system("claude", suite), options)
    started = time.perf_counter()
    outcome = runner.run()
    elapsed = time.perf_counter() - started
    return elapsed, outcome


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its children that have been waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def sdk_only(suite_root: Path, base_url: str) -> float:
    """The same 1,000 requests sent by the client from a 50-thread pool: no cache, no grading, no journal."""
    suite = load_suite(suite_root)
    system = load_system("claude", suite)
    assert isinstance(system, ClaudeSystem)
    requests = [system.build_request(case.input) for case in suite.cases]
    with Client(base_url=base_url, api_key=API_KEY, max_concurrency=CONCURRENCY) as client:
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            list(pool.map(client.create, requests))
        return time.perf_counter() - started


def cold_and_warm(work: Path) -> None:
    suite_root = write_suite(work / "suite-1k", CASES)
    ideal = math.ceil(CASES / CONCURRENCY) * LATENCY_S
    floor = ServerProcess(0.0)
    try:
        rtt = round_trip_ms(floor.base_url)
    finally:
        floor.stop()
    print(f"local server round trip at zero latency: {rtt:.1f} ms")
    if rtt > 5:
        waves = math.ceil(CASES / CONCURRENCY) * (LATENCY_S + rtt / 1000)
        print(
            f"  that round trip is paid once per wave of {CONCURRENCY}: a floor of {waves:.2f} s "
            f"({waves / ideal:.2f} x ideal) before the runner does anything"
        )

    server = ServerProcess(LATENCY_S)
    try:
        cpu = cpu_seconds()
        sdk_s = sdk_only(suite_root, server.base_url)
        sdk_cpu = cpu_seconds() - cpu
        # the same work takes more CPU time when the host is busy: these figures say how fast the machine ran
        print(
            f"client alone ({CASES} requests from {CONCURRENCY} threads, nothing else): {sdk_s:.2f} s = "
            f"{sdk_s / ideal:.2f} x ideal (CPU {sdk_cpu:.2f} s)"
        )
        colds, cold_cpus = [], []
        for attempt in range(REPEATS):
            cache = work / f"cache-{attempt}"
            cpu = cpu_seconds()
            cold_s, cold = timed_run(suite_root, work, server.base_url, cache, f"cold-{attempt}")
            cold_cpus.append(cpu_seconds() - cpu)
            assert cold.totals.done == CASES and cold.totals.errors == 0, cold.totals
            assert cold.totals.cache_hits == 0
            colds.append(cold_s)
        cold_s = statistics.median(colds)
        ratio = cold_s / ideal
        verdict = "ok" if ratio <= COLD_TARGET else "MISSED"
        runs = ", ".join(f"{s:.2f}" for s in colds)
        print(
            f"cold run: {cold_s:.2f} s = {ratio:.2f} x ideal ({ideal:.2f} s = ceil({CASES}/{CONCURRENCY}) x "
            f"{LATENCY_S * 1000:.0f} ms); target <= {COLD_TARGET:.2f} [{verdict}]  (median of {runs} s; CPU "
            f"{statistics.median(cold_cpus):.2f} s per run, workers included)"
        )

        warms = []
        for attempt in range(REPEATS):
            warm_s, warm = timed_run(suite_root, work, server.base_url, cache, f"warm-{attempt}")
            assert warm.totals.cache_hits == CASES, warm.totals
            warms.append(warm_s)
        per_case = statistics.median(warms) / CASES
        verdict = "ok" if per_case <= WARM_TARGET_S else "MISSED"
        runs = ", ".join(f"{s:.2f}" for s in warms)
        print(
            f"warm rerun: {per_case * 1000:.2f} ms per case = {per_case / WARM_TARGET_S:.2f} x the "
            f"{WARM_TARGET_S * 1000:.0f} ms target [{verdict}]  ({CASES} cache hits, grading and run directory "
            f"included; median of {runs} s)"
        )
    finally:
        server.stop()


# -- memory: a fresh interpreter, so the high-water mark is this run's alone ------------------------------------

MEMORY_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    from pathlib import Path


    def high_water_kb():
        # VmHWM is this process's own peak; ru_maxrss would also count the parent's RSS at fork time (Linux
        # carries it across exec), so it is only the fallback where /proc is missing (it is bytes on macOS)
        try:
            with open("/proc/self/status") as fh:
                return int(fh.read().split("VmHWM:")[1].split()[0])
        except (OSError, IndexError, ValueError):
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            return rss // 1024 if sys.platform == "darwin" else rss

    from evalkit._runner import Runner, RunOptions
    from evalkit.suite import load_suite
    from evalkit._systems import load_system

    imports = high_water_kb()
    suite_root, cache, out, spec, base_url = sys.argv[1:6]
    suite = load_suite(Path(suite_root))
    system = load_system(spec, suite)
    client = None
    if base_url:  # only a Claude run loads the SDK
        from evalkit._client import Client

        client = Client(base_url=base_url, api_key="sk-ant-bench-local", max_concurrency=50)
    before = high_water_kb()
    options = RunOptions(concurrency=50, cache_dir=Path(cache), run_dir=Path(out), progress=False, judge="off")
    started = time.perf_counter()
    outcome = Runner(suite, system, options, client=client).run()
    elapsed = time.perf_counter() - started
    peak = high_water_kb()
    print(json.dumps({"imports_kb": imports, "before_kb": before, "peak_kb": peak, "seconds": elapsed,
                      "done": outcome.totals.done, "hits": outcome.totals.cache_hits}))
    """
)


def memory_run(work: Path, system: str) -> None:
    suite_root = write_suite(work / "suite-10k", MEMORY_CASES)
    cache = work / "cache-10k"
    server = None
    base_url = ""
    if system == "claude":
        server = ServerProcess(0.0)
        base_url = server.base_url
        print(f"filling the cache with {MEMORY_CASES} responses first (not measured)...", flush=True)
        fill = _memory_child(suite_root, cache, work / "runs" / "fill-10k", "claude", base_url)
        assert fill["done"] == MEMORY_CASES
    try:
        spec = "claude" if system == "claude" else "baseline"
        stats = _memory_child(suite_root, cache, work / "runs" / "mem-10k", spec, base_url)
    finally:
        if server is not None:
            server.stop()
    assert stats["done"] == MEMORY_CASES
    if system == "claude":
        assert stats["hits"] == MEMORY_CASES
    scale = 1024  # the child reports KiB
    peak_mb = stats["peak_kb"] * scale / 1e6
    before_mb = stats["before_kb"] * scale / 1e6
    imports_mb = stats["imports_kb"] * scale / 1e6
    label = "warm-cache Claude system" if system == "claude" else "Python system (baseline.py)"
    verdict = "ok" if peak_mb <= MEMORY_TARGET_MB else "MISSED"
    print(
        f"10,000-case run ({label}): peak RSS {peak_mb:.0f} MB = {peak_mb / MEMORY_TARGET_MB:.2f} x the "
        f"{MEMORY_TARGET_MB:.0f} MB target [{verdict}]"
    )
    print(
        f"  high-water marks: {imports_mb:.0f} MB after imports, {before_mb:.0f} MB once the suite was loaded, "
        f"{peak_mb:.0f} MB at the end of the run (+{peak_mb - before_mb:.0f} MB for the run itself, "
        f"which took {stats['seconds']:.1f} s)"
    )


def _memory_child(suite_root: Path, cache: Path, out: Path, spec: str, base_url: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("EVALKIT_CACHE_DIR", "EVALKIT_PRICES")}
    proc = subprocess.run(
        [sys.executable, "-c", MEMORY_CHILD, str(suite_root), str(cache), str(out), spec, base_url],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the memory run failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--memory-system",
        choices=["python", "claude"],
        default="python",
        help="the 10,000-case memory run: a Python system (default) or a warm-cache Claude system",
    )
    parser.add_argument("--skip-memory", action="store_true", help="skip the 10,000-case memory run")
    parser.add_argument("--memory-only", action="store_true", help="only the 10,000-case memory run")
    args = parser.parse_args(argv)
    print(
        f"evalkit runner bench: {CASES} cases, concurrency {CONCURRENCY}, server latency {LATENCY_S * 1000:.0f} ms"
    )
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as tmp:
        work = Path(tmp)
        if not args.memory_only:
            cold_and_warm(work)
        if not args.skip_memory:
            memory_run(work, args.memory_system)
    return 0


if __name__ == "__main__":
    sys.exit(main())
