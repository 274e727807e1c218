"""What running user checks in a worker process costs: per call, and per worker start.

Run with ``python bench/bench_user_checks.py``. A trivial user check (it returns True) is graded many times
through `grade_check`, once in-process (check_timeout_s = 0) and once through the worker (the default limit),
on a small case and on a reply-drafter golden case with its output; the medians of the per-call times and the
difference (the worker's overhead) are printed. A worker's start (a fork of this process, with polars loaded
as in a run) is timed separately.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import polars  # noqa: F401  # a run's process has it loaded: the fork copies its page tables

from evalkit.graders import GradingContext, grade_check
from evalkit.graders._worker import _token, _Worker, stop_workers
from evalkit.suite import load_user_module, parse_case

CALLS = 2000
STARTS = 50
ROOT = Path(__file__).resolve().parents[1]


def _per_call(check: Any, output: Any, case: Any, ctx: GradingContext) -> list[float]:
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        grade = grade_check(check, output, case, ctx)
        times.append(time.perf_counter() - start)
        assert grade.passed
    return times


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "checks.py"
        path.write_text("import evalkit\n\n@evalkit.check('yes')\ndef yes(value, case):\n    return True\n")
        user = load_user_module(path)
        line = (ROOT / "goldens/reply-drafter/cases.jsonl").read_text(encoding="utf-8").splitlines()[0]
        record = json.loads(line)
        record["checks"] = [{"kind": "user", "name": "yes"}]
        golden, _ = parse_case(record)
        small, _ = parse_case({"id": "s", "input": "q", "checks": [{"kind": "user", "name": "yes"}]})
        assert golden is not None and small is not None
        draft = {"label": "shipping", "draft": "word " * 120}
        size = len(json.dumps(record["input"])) + len(json.dumps(draft))
        print(f"{CALLS} calls each; median per call\n")
        print(f"{'case':<28}{'in-process':>12}{'worker':>12}{'overhead':>12}")
        for name, case, output in (
            ("small (1-char input)", small, "x"),
            (f"golden ({size} B)", golden, draft),
        ):
            inline = _per_call(case.checks[0], output, case, GradingContext(user=user, check_timeout_s=0))
            worker = _per_call(case.checks[0], output, case, GradingContext(user=user, check_timeout_s=5))
            a, b = statistics.median(inline), statistics.median(worker)
            print(f"{name:<28}{a * 1e6:>10.1f}µs{b * 1e6:>10.1f}µs{(b - a) * 1e6:>10.1f}µs")
        stop_workers()
        starts = []
        token = _token(user.checks["yes"])
        for _ in range(STARTS):
            start = time.perf_counter()
            w = _Worker()
            w.call(token, "x", small, {}, 5)
            starts.append(time.perf_counter() - start)
            w.stop()
        print(
            f"\nworker start (fork + first call), median of {STARTS}: {statistics.median(starts) * 1e3:.1f} ms"
        )


if __name__ == "__main__":
    main()
