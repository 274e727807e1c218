"""`ek.runs`: every run under a folder as one frame, newest first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

_SCHEMA = {
    "run_id": "String",
    "suite": "String",
    "suite_version": "String",
    "system": "String",
    "system_model": "String",
    "judge_model": "String",
    "status": "String",
    "started_at": "String",
    "ended_at": "String",
    "cases": "Int64",
    "repeats": "Int64",
    "n": "Int64",
    "passes": "Int64",
    "rate": "Float64",
    "ci_low": "Float64",
    "ci_high": "Float64",
    "errors": "Int64",
    "path": "String",
}


def _row(path: Path | str) -> dict[str, Any] | None:
    from evalkit.api._run import Run
    from evalkit.errors import EvalkitError

    try:
        run = Run(path)
        m = run.manifest
    except (EvalkitError, OSError, ValueError, json.JSONDecodeError):
        return None  # not a run, or one whose manifest cannot be read: listed by nothing rather than crashing
    row: dict[str, Any] = {
        "run_id": m.run_id,
        "suite": m.suite,
        "suite_version": m.suite_version,
        "system": m.system.get("name"),
        "system_model": m.system.get("model"),
        "judge_model": (m.judge or {}).get("model"),
        "status": m.status,
        "started_at": m.started_at,
        "ended_at": m.ended_at,
        "cases": m.cases,
        "repeats": m.repeats,
        "path": str(path),
    }
    try:
        rate = run.pass_rate().row(0, named=True) if not run.checks().is_empty() else {}
    except (EvalkitError, OSError):
        rate = {}
    for key in ("n", "passes", "rate", "ci_low", "ci_high", "errors"):
        row[key] = rate.get(key)
    return row


def runs(folder: str | Path = "runs", *, suite: str | None = None) -> pl.DataFrame:
    """Every run directly under `folder` (and one level down), newest first.

    Parameters
    ----------
    folder:
        Where runs are written (``runs/`` by default), or a store URL (``s3://bucket/runs``): each run is read
        through a local copy, fetched once per published version.
    suite:
        Only the runs of the suite of this name.

    Returns
    -------
    polars.DataFrame
        One row per run: run_id, suite, suite_version, system, system_model, judge_model, status, started_at,
        ended_at, cases, repeats, n, passes, rate, ci_low, ci_high, errors, path.
    """
    import polars as pl

    from evalkit._store import is_url, list_runs, parse_url

    found: list[Path | str]
    if is_url(folder):
        found = [where.url for where in list_runs(parse_url(folder))]  # each read through its local copy
    else:
        root = Path(folder)
        found = sorted({p.parent for p in [*root.glob("*/manifest.json"), *root.glob("*/*/manifest.json")]})
    rows = [r for r in map(_row, found) if r is not None and (suite is None or r["suite"] == suite)]
    schema = {k: getattr(pl, v) for k, v in _SCHEMA.items()}
    return pl.DataFrame(rows, schema=schema).sort("started_at", descending=True, nulls_last=True)
