"""Coverage (and power) of every interval and test evalkit prints, by seeded simulation, against the nominal level.

Imports every module in ``bench/coverage/`` (each defines ``table(sims, seed) -> list[dict]``), runs it at full
size and prints one table per module: each setting's coverage (or power), its Monte Carlo standard error, and
the ratio to the nominal level (1.00 is the ideal; a ratio below 1 by more than about two standard errors is an
interval that covers less often than it says). Run from the repository root::

    .venv/bin/python bench/bench_coverage.py                  # every module, 2,000 simulations a setting
    .venv/bin/python bench/bench_coverage.py --only slices --sims 500
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "bench" / "coverage"


def modules(only: list[str] | None = None) -> list[tuple[str, ModuleType]]:
    """Every module of ``bench/coverage/`` (or those named in `only`), in name order."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # so a module can import evalkit from this checkout
    found = []
    for path in sorted(FOLDER.glob("*.py")):
        name = path.stem
        if name.startswith("_") or (only and name not in only):
            continue
        spec = importlib.util.spec_from_file_location(f"coverage_{name}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if callable(getattr(module, "table", None)):
            found.append((name, module))
    return found


def format_table(name: str, rows: list[dict[str, Any]], seconds: float) -> str:
    """One module's rows: statistic, setting, coverage or power with its standard error, and the ratio."""
    if not rows:
        return f"== {name}: no rows ({seconds:.1f} s)"
    stat_w = max(9, *(len(str(r["statistic"])) for r in rows))
    set_w = max(7, *(len(str(r["setting"])) for r in rows))
    head = f"{'statistic':<{stat_w}}  {'setting':<{set_w}}  {'measure':>8}  {'value':>7}  {'+/- se':>6}  {'nominal':>7}  {'ratio':>5}"
    lines = [f"== {name} ({len(rows)} settings, {seconds:.1f} s)", head, "-" * len(head)]
    for r in rows:
        measure = "coverage" if "coverage" in r else "power"
        value = float(r[measure])
        nominal = float(r["nominal"])
        se = math.sqrt(nominal * (1.0 - nominal) / int(r["sims"]))
        flag = "  low" if value < nominal - 2.0 * se else ""
        lines.append(
            f"{r['statistic']:<{stat_w}}  {r['setting']:<{set_w}}  {measure:>8}  {100 * value:6.1f}%  "
            f"{100 * se:5.1f}%  {100 * nominal:6.1f}%  {value / nominal:5.2f}{flag}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=2000, help="simulations per setting (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--only", action="append", metavar="MODULE", help="run only this module (repeatable)")
    args = parser.parse_args(argv)
    found = modules(args.only)
    if not found:
        print(f"no coverage module found in {FOLDER}", file=sys.stderr)
        return 1
    print(f"coverage against the nominal level, {args.sims} simulations a setting, seed {args.seed}")
    print(
        "ratio = value / nominal; 'low' marks a value more than two standard errors below the nominal level\n"
    )
    for name, module in found:
        start = time.perf_counter()
        rows = module.table(args.sims, args.seed)
        print(format_table(name, rows, time.perf_counter() - start), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
