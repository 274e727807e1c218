"""Time `evalkit run` against a rate limit: 600 cases at 1,200 requests per minute, concurrency 50.

Run with ``.venv/bin/python bench/bench_rate_limits.py`` (about 35 s a run). The local server enforces the limit
as the API does (a bucket of one second's worth, refilled continuously; 429 ``rate_limit_error`` with
``retry-after`` and the ``anthropic-ratelimit-*`` headers on every reply) and answers each request after 100 ms.
The ideal is the limit's own pace, 600 / (1,200 / 60) = 30 s; the target is <= 1.1 x that with no case ending in
an error. Printed: the time, its ratio, the error results, and the 429s the server sent (which the client
received and waited out).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_command import machine
from bench_runner import API_KEY, write_suite

from evalkit.testing.server import LocalAnthropicServer, RateLimits

CASES = 600
CONCURRENCY = 50
RPM = 1_200
LATENCY_S = 0.100
TARGET = 1.1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs (default 1)")
    args = parser.parse_args(argv)
    ideal = CASES / (RPM / 60)
    print(
        f"evalkit run under a rate limit: {CASES} cases, --concurrency {CONCURRENCY}, {RPM} requests a minute"
    )
    print(f"  {machine()}")
    times = []
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-limits-") as tmp:
        work = Path(tmp)
        suite = write_suite(work / "suite", CASES)
        for i in range(args.repeats):
            server = LocalAnthropicServer(
                text="even", latency=LATENCY_S, rate_limits=RateLimits(rpm=RPM)
            ).start()
            try:
                env = dict(os.environ, ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY=API_KEY)
                argv_ = [sys.executable, "-m", "evalkit.cli", "run", str(suite), "--system", "claude"]
                argv_ += ["--cache", "off", "--concurrency", str(CONCURRENCY), "--judge", "off", "-q"]
                argv_ += ["--out", str(work / f"run-{i}"), "--fail-on-error", "--max-retries", "0"]
                started = time.perf_counter()
                proc = subprocess.run(argv_, capture_output=True, text=True, env=env, check=False)
                elapsed = time.perf_counter() - started
                refused = server.rate_limited
                log = server.requests_to("/v1/messages")
                answered = len([r for r in log if r.status == 200])
                span = max(r.started_at for r in log) - min(r.started_at for r in log)
            finally:
                server.stop()
            errors = (
                "no error results"
                if proc.returncode == 0
                else f"exit {proc.returncode}: errors\n{proc.stdout}"
            )
            times.append(elapsed)
            print(
                f"run {i + 1}: {elapsed:.1f} s = {elapsed / ideal:.2f} x ideal ({ideal:.0f} s); {errors}; "
                f"{refused} 429s received, {answered} requests answered; first to last request {span:.1f} s"
            )
    median = statistics.median(times)
    verdict = "ok" if median / ideal <= TARGET else "MISSED"
    print(f"median {median:.1f} s = {median / ideal:.2f} x ideal; target <= {TARGET} [{verdict}]")
    print(f"  {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
