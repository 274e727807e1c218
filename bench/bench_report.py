"""Time the report and the gate over 1,000,000 check-level rows: two runs of 50,000 cases x 2 repeats x 5 checks.

Run with ``python bench/bench_report.py``. The two runs are written as ordinary run directories first (not
timed); then each command's work is timed from loading the parquet files to the finished text, HTML page or
JUnit file, with the statistics inside the report timed on their own too. Times print as a share of the 5 s
budget per command.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from evalkit._baseline import VERDICT_COLUMNS, Reference, load_reference, run_info
from evalkit._gate import run_gate
from evalkit._report import build_report, format_report, render_html
from evalkit._results import CHECK_ROW_SCHEMA, Manifest, RunDir, read_run
from evalkit.stats import case_verdicts

BUDGET_S = 5.0
CASES = 50_000
REPEATS = 2
TIERS = ("exact", "exact", "code", "code", "judge")
SUITE = "bench"


def synthetic_run(run_id: str, lift: float, seed: int) -> pl.DataFrame:
    """One run's check rows in the results schema; case difficulty is shared across runs (seed 0)."""
    checks = len(TIERS)
    n = CASES * REPEATS * checks
    idx = np.arange(n)
    case = idx // (REPEATS * checks)
    repeat = (idx // checks) % REPEATS
    check = idx % checks
    task = idx // checks
    skill = np.random.default_rng(0).normal(0.0, 1.5, CASES)
    rng = np.random.default_rng(seed)
    logit = 2.5 + skill[case] + lift + rng.normal(0.0, 0.7, CASES * REPEATS)[task]
    status = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-logit)), "pass", "fail").astype(object)
    status[rng.random(n) < 0.005] = "error"
    is_judge = check == checks - 1
    status[is_judge & (rng.random(n) < 0.05)] = "skipped"
    judged = is_judge & (status != "skipped")
    frame = pl.DataFrame(
        {
            "case": case,
            "repeat": repeat,
            "check_index": check,
            "tier": np.array(TIERS)[check],
            "status": status.astype(str),
            "cost_usd": rng.gamma(2.0, 0.0015, CASES * REPEATS)[task],
            "latency_s": rng.lognormal(0.0, 0.5, CASES * REPEATS)[task],
            "judge_cost_usd": np.where(judged, rng.gamma(2.0, 0.004, n), np.nan),
            "judge_latency_s": np.where(judged, rng.lognormal(0.5, 0.4, n), np.nan),
        }
    )
    s = pl.col("status")
    out = frame.with_columns(
        pl.lit(run_id).alias("run_id"),
        pl.lit(SUITE).alias("suite"),
        pl.lit("v1").alias("suite_version"),
        pl.format("case-{}", pl.col("case")).alias("case_id"),
        pl.format("slice-{}", pl.col("case") % 8).alias("slice"),
        pl.when(pl.col("case") % 5 == 0).then(pl.lit("holdout")).otherwise(pl.lit("dev")).alias("split"),
        pl.lit("claude").alias("system"),
        pl.lit("claude-x").alias("system_model"),
        pl.lit("claude-x-20250929").alias("system_model_version"),
        pl.format('"an answer of run {} to case {}"', pl.lit(run_id), pl.col("case")).alias("output"),
        pl.format("check-{}", pl.col("check_index")).alias("check_kind"),
        pl.format("check-{}", pl.col("check_index")).alias("check_name"),
        pl.when(s.is_in(["pass", "fail"])).then(s == "pass").alias("passed"),
        pl.when(s == "fail").then(pl.lit("expected 'x', got 'y'")).otherwise(pl.lit("ok")).alias("detail"),
        pl.when(s == "error").then(pl.lit("TimeoutError")).alias("error"),
        pl.when(s == "skipped").then(pl.lit("a cheaper check failed")).alias("skipped_reason"),
        pl.col("judge_cost_usd").fill_nan(None),
        pl.col("judge_latency_s").fill_nan(None),
        pl.when(pl.col("tier") == "judge").then(pl.lit("claude-judge-20251101")).alias("judge_model_version"),
        pl.lit(False).alias("cache_hit"),
    )
    missing = [pl.lit(None, dtype=t).alias(c) for c, t in CHECK_ROW_SCHEMA.items() if c not in out.columns]
    return out.with_columns(missing).select(pl.col(c).cast(t) for c, t in CHECK_ROW_SCHEMA.items())


def write_run(root: Path, run_id: str, rows: pl.DataFrame) -> Path:
    run = RunDir(root / run_id)
    run.write_manifest(
        Manifest(
            run_id=run_id,
            suite=SUITE,
            suite_version="v1",
            suite_path=str(root / "no-suite-here"),
            cases=CASES,
            repeats=REPEATS,
            system={"kind": "claude", "name": "claude", "model": "claude-x", "prompt_hash": "abc"},
            judge={"model": "claude-judge"},
            status="complete",
        )
    )
    rows.write_parquet(run.parquet_path)
    return run.path


def timed(name: str, fn: Callable[[], Any], log: list[tuple[str, float]]) -> Any:
    start = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - start
    log.append((name, elapsed))
    print(f"  {name:<46} {elapsed:7.3f} s")
    return value


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        a_rows = synthetic_run("baseline", 0.0, 1)
        b_rows = synthetic_run("candidate", -0.1, 2)
        a_path, b_path = write_run(root, "baseline", a_rows), write_run(root, "candidate", b_rows)
        total_rows = a_rows.height + b_rows.height
        print(
            f"wrote two runs, {total_rows:,} check rows, in {time.perf_counter() - start:.2f} s (not counted)\n"
        )
        del a_rows, b_rows

        print("statistics, from frames in memory:")
        stats_log: list[tuple[str, float]] = []
        manifest, rows = read_run(b_path)
        ref_manifest, ref_rows = read_run(a_path)
        reference = Reference(
            a_path,
            "run",
            run_info(ref_manifest, ref_rows),
            case_verdicts(ref_rows).select(VERDICT_COLUMNS),
            ref_rows,
            ref_manifest,
        )
        report = timed(
            "build_report (every statistic in the report)",
            lambda: build_report(manifest, rows, reference),
            stats_log,
        )
        stats_total = sum(t for _, t in stats_log)

        print("\nevalkit report RUN --baseline RUN --html FILE:")
        report_log: list[tuple[str, float]] = []
        manifest, rows = timed("load the run (parquet)", lambda: read_run(b_path), report_log)
        reference = timed(
            "load the baseline run and its verdicts", lambda: load_reference(a_path), report_log
        )
        report = timed("build_report", lambda: build_report(manifest, rows, reference), report_log)
        text = timed("format_report (terminal)", lambda: format_report(report), report_log)
        page = timed("render_html (3 charts to SVG, flipped capped)", lambda: render_html(report), report_log)
        report_total = sum(t for _, t in report_log)

        print("\nevalkit gate RUN --baseline RUN --junit FILE:")
        gate_log: list[tuple[str, float]] = []
        outcome = timed(
            "run_gate (load, compare, decide, JUnit XML)",
            lambda: run_gate(b_path, a_path, junit=root / "junit.xml"),
            gate_log,
        )
        gate_total = sum(t for _, t in gate_log)

    p = report.comparison.paired if report.comparison else None
    print(f"\nstatistics     {stats_total:6.2f} s = {stats_total / BUDGET_S:.2f} x budget ({BUDGET_S:g} s)")
    print(f"report command {report_total:6.2f} s = {report_total / BUDGET_S:.2f} x budget")
    print(f"gate command   {gate_total:6.2f} s = {gate_total / BUDGET_S:.2f} x budget")
    if p is not None:
        print(
            f"\n(sanity) {total_rows:,} rows; paired n {p.n:,}, diff {p.diff:+.4f} "
            f"[{p.ci_low:+.4f}, {p.ci_high:+.4f}], flipped {p.flipped.height:,} (HTML lists 200), "
            f"McNemar p {p.mcnemar_exact_p:.3g}; text {len(text):,} chars, HTML {len(page) / 1e6:.2f} MB; "
            f"gate exit {outcome.exit_code}"
        )


if __name__ == "__main__":
    main()
