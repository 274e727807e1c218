"""Frames for the statistics tests: check rows and case verdicts built from short descriptions."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from scipy import stats as sps

EXACT = 1e-9
Z975 = float(sps.norm.ppf(0.975))


def check_row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run_id": "r1",
        "case_id": "c1",
        "slice": "s",
        "split": "dev",
        "repeat": 0,
        "check_kind": "exact",
        "tier": "exact",
        "status": "pass",
        "cost_usd": 0.01,
        "judge_cost_usd": None,
        "latency_s": 1.0,
        "judge_latency_s": None,
    }
    row.update(overrides)
    if "passed" not in overrides:
        row["passed"] = {"pass": True, "fail": False}.get(row["status"])
    return row


ROW_SCHEMA = {
    "run_id": pl.String,
    "case_id": pl.String,
    "slice": pl.String,
    "split": pl.String,
    "repeat": pl.Int64,
    "check_kind": pl.String,
    "tier": pl.String,
    "status": pl.String,
    "cost_usd": pl.Float64,
    "judge_cost_usd": pl.Float64,
    "latency_s": pl.Float64,
    "judge_latency_s": pl.Float64,
    "passed": pl.Boolean,
}


def rows_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=ROW_SCHEMA)


def verdicts_from(outcomes: dict[str, list[list[str]]], slices: dict[str, str] | None = None) -> pl.DataFrame:
    """Verdict-level frame: run -> per case a list of repeat statuses."""
    records = []
    for run, cases in outcomes.items():
        for i, repeats in enumerate(cases):
            case = f"c{i:04d}"
            for r, status in enumerate(repeats):
                records.append(
                    {
                        "run_id": run,
                        "case_id": case,
                        "slice": (slices or {}).get(case, f"s{i % 3}"),
                        "split": "holdout" if i % 5 == 0 else "dev",
                        "repeat": r,
                        "status": status,
                        "passed": {"pass": True, "fail": False}.get(status),
                    }
                )
    schema = {
        "run_id": pl.String,
        "case_id": pl.String,
        "slice": pl.String,
        "split": pl.String,
        "repeat": pl.Int64,
        "status": pl.String,
        "passed": pl.Boolean,
    }
    return pl.DataFrame(records, schema=schema)


def bernoulli_statuses(rng: np.random.Generator, p: np.ndarray, k: int) -> list[list[str]]:
    draws = rng.random((len(p), k)) < p[:, None]
    return [["pass" if d else "fail" for d in case] for case in draws]


def paired_verdicts(seed: int, n: int, k: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.beta(2.0, 2.0, n)
    better = np.clip(base + rng.normal(0.05, 0.15, n), 0.0, 1.0)
    return verdicts_from({"A": bernoulli_statuses(rng, base, k), "B": bernoulli_statuses(rng, better, k)})


def case_means(v: pl.DataFrame, run: str) -> np.ndarray:
    m = (
        v.filter(pl.col("run_id") == run)
        .group_by("case_id")
        .agg(pl.col("passed").cast(pl.Float64).mean())
        .sort("case_id")
    )
    return m.get_column("passed").to_numpy()
