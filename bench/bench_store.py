"""What keeping runs and the response cache on an S3-compatible store costs against a local folder.

Run with ``.venv/bin/python bench/bench_store.py``. A 1,000-case suite runs as ``evalkit run --system claude
--concurrency 50 --judge off`` (a fresh process each time) against the local server answering each request after
100 ms, with its runs and cache either in local folders or on a store: moto's S3 server in its own process on
127.0.0.1 (no network latency: the figure is evalkit's own overhead, not a link's). Every figure is the median of
``--repeats`` runs, each kind alternating with its local counterpart so the host's load hits both alike; the
ratio's ideal is 1.00x (the store costs nothing):

1. Cold: no response cached anywhere; 1,000 calls. On the store: 1,000 create-only cache writes, and the run
   published (journal and parquet, then the manifest).
2. Warm, another machine: every response on the store, none in this machine's local layer (a new CI runner):
   1,000 reads from the store instead of from disk.
3. Warm, same machine: the local layer already holds every response; only the publish touches the store.

moto answers one request at a time (about 200 a second here), so the store's own time for the requests a run makes
is measured first, from the same threads: for the cold and the new-machine runs, the extra time is also printed
against it (ideal 1.00x: evalkit adds nothing to what the store takes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_command import machine
from bench_runner import API_KEY, ServerProcess, write_suite

CASES = 1_000
CONCURRENCY = 50
LATENCY_S = 0.100
REPEATS = 3
ROOT = Path(__file__).resolve().parent.parent


class MotoProcess:
    """moto's S3 server in a child process, with one bucket."""

    def __init__(self, bucket: str) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{port}"
        argv = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import boto3

        client = boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id="bench", aws_secret_access_key="bench",
            region_name="us-east-1",
        )  # fmt: skip
        for _ in range(100):
            try:
                client.create_bucket(Bucket=bucket)
                return
            except Exception:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("moto's server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def store_alone(endpoint: str, n: int) -> tuple[float, float]:
    """Seconds for n create-only puts, then n gets, of 1.5 kB objects from CONCURRENCY threads: what the store
    itself takes for the requests a cold run and a new machine's warm run make (the floor of both)."""
    from concurrent.futures import ThreadPoolExecutor

    from evalkit._store import Bucket, parse_url

    os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                      AWS_REGION="us-east-1")  # fmt: skip
    bucket = Bucket(parse_url("s3://bench/floor"))
    data = b"x" * 1500
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        started = time.perf_counter()
        list(pool.map(lambda i: bucket.put_if(f"floor/{i}", data, create=True), range(n)))
        puts = time.perf_counter() - started
        started = time.perf_counter()
        list(pool.map(lambda i: bucket.get(f"floor/{i}"), range(n)))
        gets = time.perf_counter() - started
    return puts, gets


def run(
    suite: Path, work: Path, base_url: str, runs: str, cache: str, store_dir: Path, env: dict[str, str]
) -> float:
    """Seconds for one whole `evalkit run` process."""
    full = dict(env, ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY=API_KEY, EVALKIT_STORE_DIR=str(store_dir))
    full.pop("PYTHONDONTWRITEBYTECODE", None)
    argv = [sys.executable, "-m", "evalkit.cli", "run", str(suite), "--system", "claude", "--judge", "off"]
    argv += ["--concurrency", str(CONCURRENCY), "--cache-dir", cache, "--runs-dir", runs, "-q"]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=full, cwd=work, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0 or "run saved to" not in proc.stdout:
        raise RuntimeError(
            f"evalkit run exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=REPEATS, help=f"runs of each kind (default {REPEATS})")
    args = parser.parse_args(argv)
    print(f"runs and cache on a store vs local folders: {CASES} cases, concurrency {CONCURRENCY}, "
          f"latency {LATENCY_S * 1000:.0f} ms, store: moto's S3 server on 127.0.0.1")  # fmt: skip
    print(f"  {machine()}")
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-store-") as tmp:
        work = Path(tmp)
        suite = write_suite(work / "suite", CASES)
        server = ServerProcess(LATENCY_S)
        store = MotoProcess("bench")
        env = dict(os.environ, AWS_ENDPOINT_URL=store.endpoint, AWS_ACCESS_KEY_ID="bench",
                   AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1")  # fmt: skip
        times: dict[str, list[float]] = {k: [] for k in ("cold local", "cold store", "warm local",
                                                          "warm store, new machine", "warm store, same machine")}  # fmt: skip
        try:
            puts, gets = store_alone(store.endpoint, CASES)
            print(f"the store alone, {CONCURRENCY} threads: {CASES} create-only puts {puts:.2f} s, {CASES} gets "
                  f"{gets:.2f} s (moto serves requests one at a time: a real store's floor is far lower)")  # fmt: skip
            for i in range(args.repeats):
                local_cache, store_cache = work / f"cache-{i}", f"s3://bench/cache-{i}"
                layer = work / f"store-{i}"
                times["cold local"].append(
                    run(suite, work, server.base_url, str(work / "runs"), str(local_cache), layer, env)
                )
                times["cold store"].append(
                    run(suite, work, server.base_url, "s3://bench/runs", store_cache, layer, env)
                )
                times["warm local"].append(
                    run(suite, work, server.base_url, str(work / "runs"), str(local_cache), layer, env)
                )
                fresh = work / f"store-{i}-b"  # another machine: nothing in its local layer
                times["warm store, new machine"].append(
                    run(suite, work, server.base_url, "s3://bench/runs", store_cache, fresh, env)
                )
                times["warm store, same machine"].append(
                    run(suite, work, server.base_url, "s3://bench/runs", store_cache, fresh, env)
                )
                shutil.rmtree(layer, ignore_errors=True)
        finally:
            server.stop()
            store.stop()
    med = {k: statistics.median(v) for k, v in times.items()}
    for kind, base, floor in (("cold store", "cold local", puts), ("warm store, new machine", "warm local", gets),
                              ("warm store, same machine", "warm local", 0.0)):  # fmt: skip
        print(f"{kind:26s} {med[kind]:6.2f} s  vs {base} {med[base]:6.2f} s  = {med[kind] / med[base]:.2f}x "
              f"(ideal 1.00x; runs {', '.join(f'{t:.2f}' for t in times[kind])} s)")  # fmt: skip
        if floor:
            extra = med[kind] - med[base]
            print(f"{'':26s} extra {extra:.2f} s = {extra / floor:.2f}x the store's own time for its requests "
                  f"({floor:.2f} s; ideal 1.00x)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
