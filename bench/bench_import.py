"""What ``import evalkit`` costs: wall time over a bare interpreter, and what it loads.

The target is 0.15 s for ``import evalkit`` (the faces load their modules on first use), with neither the SDK nor
polars loaded. Each figure is the median of --runs fresh interpreters, interleaved with bare ones so load on the
machine falls on both alike.

    python bench/bench_import.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGET_S = 0.15
FACES = (
    "evalkit",
    "evalkit.api",
    "evalkit.suite",
    "evalkit.graders",
    "evalkit.stats",
    "evalkit.calibration",
    "evalkit.probes",
    "evalkit.charts",
    "evalkit.errors",
)


def _wall(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print(f"import cost over a bare interpreter, median of {args.runs} (target {TARGET_S:.2f} s)")
    for face in FACES:
        bare, loaded = [], []
        for _ in range(args.runs):
            bare.append(_wall("pass"))
            loaded.append(_wall(f"import {face}"))
        cost = statistics.median(loaded) - statistics.median(bare)
        probe = (
            f"import sys, {face}; "
            "print(len([m for m in sys.modules if m.startswith('evalkit')]), "
            "'anthropic' in sys.modules, 'polars' in sys.modules)"
        )
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
        modules, sdk, polars = out.stdout.split()
        print(
            f"  import {face:<20} {cost * 1000:6.1f} ms  {cost / TARGET_S:4.2f} x target   "
            f"evalkit modules {modules:>3}  anthropic {sdk:<5}  polars {polars}"
        )


if __name__ == "__main__":
    main()
