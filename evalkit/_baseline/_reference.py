"""What a run is compared against: another run directory, or a committed baseline.json."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import polars as pl

from evalkit._baseline._file import BASELINE_NAME, Baseline, load_baseline
from evalkit._baseline._hashes import suite_case_hashes
from evalkit._baseline._info import VERDICT_COLUMNS, RunInfo, run_info
from evalkit._baseline._outputs import output_rows
from evalkit._results import Manifest, read_run
from evalkit.errors import EvalkitError
from evalkit.stats import case_verdicts


@dataclass(frozen=True, eq=False)
class Reference:
    """What a run is compared against: another run directory, or a baseline.json."""

    path: Path
    kind: Literal["run", "baseline"]
    info: RunInfo
    verdicts: pl.DataFrame
    rows: pl.DataFrame | None = None
    manifest: Manifest | None = None
    case_hashes: dict[str, str] | None = None
    """Per-case content hashes of the reference's suite version, when known."""
    output_rows: pl.DataFrame | None = None
    """Check rows with each case's output, in a run's shape (case_id, repeat, check_index, case_status,
    output, case_error, check_name, check_kind, check_field, status, detail, error, judge_reasoning): a run's
    own rows, or the first repeat a baseline.json stores (with ``output_clipped`` and ``clipped`` flags).
    None when the baseline stores no outputs; ``outputs_note`` says why. ``rows`` stays a run's full rows
    only, since costs and latencies are read from it."""
    outputs_note: str | None = None
    """Why ``output_rows`` is None, and what to do about it."""
    majority_only: bool = False
    """The reference is a baseline.json of a run with repeats that keeps only each case's majority verdict
    (written before format 3): a comparison with it can only compare majority verdicts."""
    repeats_note: str | None = None
    """Why a comparison with this reference compares majority verdicts, and what to do about it."""


def _baseline_verdicts(baseline: Baseline, label: str) -> pl.DataFrame:
    """The verdicts a baseline.json keeps: each repeat's where it stores them (format 3), else one per case."""
    stored = baseline.repeats or {}
    ids: list[str] = []
    repeats: list[int] = []
    statuses: list[str] = []
    for case_id, status in baseline.cases.items():
        per_repeat = stored.get(case_id) or [status]
        ids.extend([case_id] * len(per_repeat))
        repeats.extend(range(len(per_repeat)))
        statuses.extend(per_repeat)
    return pl.DataFrame(
        {
            "run_id": [label] * len(ids),
            "case_id": ids,
            "repeat": repeats,
            "slice": [None] * len(ids),
            "split": [None] * len(ids),
            "status": statuses,
        },
        schema={"run_id": pl.String, "case_id": pl.String, "repeat": pl.Int64}
        | {c: pl.String for c in ("slice", "split", "status")},
    )


def baseline_info(baseline: Baseline) -> RunInfo:
    judge = baseline.judge or {}
    return RunInfo(
        run_id=baseline.run_id,
        suite=baseline.suite,
        suite_version=baseline.suite_version,
        started_at=baseline.run_started_at,
        system_name=baseline.system.get("name"),
        system_model=baseline.system.get("model"),
        system_model_versions=tuple(baseline.system.get("model_versions") or ()),
        prompt_hash=baseline.system.get("prompt_hash"),
        judge_model=judge.get("model"),
        judge_model_versions=tuple(judge.get("model_versions") or ()),
        code_hash=baseline.system.get("code_hash"),
        judge_prompt_hash=judge.get("prompt_hash"),
    )


def load_reference(path: str | Path) -> Reference:
    """A run directory (or its manifest.json), a baseline.json, or a suite folder holding one."""
    path = Path(path)
    if path.is_file() and path.name == "manifest.json":
        path = path.parent
    if path.is_dir() and not (path / "manifest.json").exists() and (path / BASELINE_NAME).is_file():
        path = path / BASELINE_NAME  # a suite folder stands for its committed baseline
    if path.is_dir():
        manifest, rows = read_run(path)
        if rows.is_empty():
            raise EvalkitError(f"{path}: the baseline run has no results")
        verdicts = case_verdicts(rows).select(VERDICT_COLUMNS)
        hashes = suite_case_hashes(manifest.suite_path, manifest.suite_version)
        info = run_info(manifest, rows)
        return Reference(path, "run", info, verdicts, rows, manifest, hashes, output_rows=rows)
    if not path.exists():
        raise EvalkitError(f"{path}: no such run directory or baseline file")
    baseline = load_baseline(path)
    info = baseline_info(baseline)
    verdicts = _baseline_verdicts(baseline, baseline.run_id)
    stored = output_rows(baseline.outputs) if baseline.outputs is not None else None
    return Reference(
        path,
        "baseline",
        info,
        verdicts,
        case_hashes=baseline.case_hashes,
        output_rows=stored,
        outputs_note=_no_outputs(path, baseline) if stored is None else None,
        majority_only=baseline.majority_only,
        repeats_note=_no_repeats(path, baseline) if baseline.majority_only else None,
    )


def _no_repeats(path: Path, baseline: Baseline) -> str:
    again = f"`evalkit baseline accept <run dir of {baseline.run_id}> --to {path}`"
    return (
        f"{path} is a format-{baseline.format_version} baseline.json of a {baseline.score.repeats}-repeat run: it "
        "keeps one majority verdict per case, not each repeat's verdict, so this comparison is of majority "
        "verdicts on both sides (McNemar's exact test), not of case pass rates. Re-save the baseline "
        f"({again}) to store each repeat's verdict, or compare against a run directory."
    )


def _no_outputs(path: Path, baseline: Baseline) -> str:
    again = f"`evalkit baseline accept <run dir of {baseline.run_id}> --to {path}`"
    if baseline.format_version < 2:
        return (
            f"{path} is a format-{baseline.format_version} baseline.json: it keeps one verdict per case, not "
            f"outputs or check details. Re-save the baseline ({again}) to store them, or compare against a run "
            "directory."
        )
    return (
        f"{path} was saved with --no-outputs: it keeps one verdict per case, not outputs or check details. "
        f"Re-save it without --no-outputs ({again}) to store them, or compare against a run directory."
    )
