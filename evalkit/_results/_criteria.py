"""The judge's per-criterion verdicts of a run, keyed by (case id, repeat, check index)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from evalkit._results._rundir import RunDir


def judge_criteria(run_dir: str | Path) -> dict[tuple[str, int, int], list[dict[str, Any]]]:
    """Per (case id, repeat, check index), the judge's per-criterion verdicts.

    From the check rows' ``judge_criteria`` column; from the run's results.jsonl for a results.parquet written
    before the rows had it. {} when neither is there.
    """
    run = RunDir(Path(run_dir))
    out: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    if run.parquet_path.is_file():
        try:
            if "judge_criteria" in pl.read_parquet_schema(run.parquet_path):
                return criteria_of(pl.read_parquet(run.parquet_path, columns=list(_CRITERIA_KEY)))
        except (OSError, pl.exceptions.PolarsError):
            return {}
    if not run.journal_path.is_file():
        return {}
    try:
        results = run.read_journal()
    except (OSError, ValueError):
        return {}
    for r in results:
        for c in r.checks:
            if c.judge_criteria:
                out[(r.case_id, r.repeat, c.index)] = list(c.judge_criteria)
    return out


_CRITERIA_KEY = ("case_id", "repeat", "check_index", "judge_criteria")


def criteria_of(rows: pl.DataFrame) -> dict[tuple[str, int, int], list[dict[str, Any]]]:
    """Per (case id, repeat, check index), the judge's per-criterion verdicts in check rows that have any."""
    if "judge_criteria" not in rows.columns:
        return {}
    given = rows.filter(pl.col("judge_criteria").list.len() > 0)
    return {
        (cid, repeat, index): list(crit)
        for cid, repeat, index, crit in given.select(_CRITERIA_KEY).iter_rows()
    }
