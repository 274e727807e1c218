"""Peak memory of `evalkit agreement` on 1,000,000 ratings, under a 6 GB address-space cap.

Writes a ratings file (500,000 items x 2 raters, labels 1-5, 10% of them missing) to a temporary folder, runs
``python -m evalkit.cli agreement FILE --scale ordinal --json`` in a child process whose address space is capped at
6 GB (``resource.setrlimit(RLIMIT_AS)``), and prints the child's peak resident memory, its wall time, and whether
it finished. The bootstrap (1,000 resamples, the default) used to build (n_boot, n) int64 arrays at once and
needed about 16 GB here; it now draws resamples in chunks (``evalkit.stats.resample_chunks``). Run from the
repository root::

    .venv/bin/python bench/bench_agreement_memory.py [--ratings 1000000] [--cap-gb 6]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def write_ratings(path: Path, ratings: int, seed: int = 0) -> None:
    """`ratings` ratings: items rated by two raters on 1-5, the second agreeing with the first 70% of the time."""
    rng = np.random.default_rng(seed)
    items = ratings // 2
    first = rng.integers(1, 6, size=items)
    second = np.where(rng.random(items) < 0.7, first, rng.integers(1, 6, size=items))
    missing = rng.random((items, 2)) < 0.1
    with path.open("w", encoding="utf-8") as f:
        for i in range(items):
            for r, (value, gone) in enumerate(((first[i], missing[i, 0]), (second[i], missing[i, 1]))):
                row = {"item": f"i{i}", "rater": ("human", "judge")[r], "value": None if gone else int(value)}
                f.write(json.dumps(row) + "\n")


def _cap(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ratings", type=int, default=1_000_000)
    parser.add_argument("--cap-gb", type=float, default=6.0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ratings.jsonl"
        start = time.perf_counter()
        write_ratings(path, args.ratings)
        print(
            f"wrote {args.ratings:,} ratings ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - start:.1f} s"
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        limit = int(args.cap_gb * (1 << 30))
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "evalkit.cli", "agreement", str(path), "--scale", "ordinal", "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            preexec_fn=lambda: _cap(limit),  # the child only sets its own limit
            check=False,
        )
        seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(
        f"evalkit agreement under a {args.cap_gb:g} GB cap: exit {done.returncode}, {seconds:.1f} s, peak RSS {peak_kb / (1 << 20):.2f} GB"
    )
    if done.returncode != 0:
        print(done.stderr[-2000:])
        return 1
    out = json.loads(done.stdout)
    pair = out["pairs"][0]
    print(
        f"kappa {pair['cohen_kappa']:.4f} {pair['cohen_kappa_ci']}, alpha {out['krippendorff_alpha']:.4f} {out['krippendorff_alpha_ci']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
