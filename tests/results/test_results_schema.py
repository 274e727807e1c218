"""The frame's columns come from the result models in one place, and match the on-disk schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import polars as pl
import pytest

from evalkit._results import (
    CASE_STATUSES,
    CHECK_ROW_SCHEMA,
    CHECK_STATUSES,
    RESULTS_SCHEMA_VERSION,
    CaseResult,
    CaseStatus,
    CheckResult,
    CheckStatus,
    Manifest,
    RunDir,
    check_rows,
    read_run,
)
from evalkit._results._error_kinds import CALL_ERROR_KINDS, ERROR_KINDS
from evalkit._results._frame import (
    CASE_COLUMNS,
    CASE_FIELDS_NOT_IN_FRAME,
    CHECK_COLUMNS,
    CHECK_FIELDS_NOT_IN_FRAME,
)
from evalkit._results._upgrade import ADDED_COLUMNS
from evalkit.errors import EvalkitError

# results.parquet as version 1 of the results schema wrote it (tests/results/v1_run/ is such a run).
ON_DISK_V1 = [
    ("run_id", pl.String),
    ("suite", pl.String),
    ("suite_version", pl.String),
    ("case_id", pl.String),
    ("slice", pl.String),
    ("split", pl.String),
    ("repeat", pl.Int64),
    ("case_status", pl.String),
    ("system", pl.String),
    ("system_model", pl.String),
    ("system_model_version", pl.String),
    ("output", pl.String),
    ("output_hash", pl.String),
    ("case_error", pl.String),
    ("input_tokens", pl.Int64),
    ("output_tokens", pl.Int64),
    ("cost_usd", pl.Float64),
    ("latency_s", pl.Float64),
    ("cache_hit", pl.Boolean),
    ("check_index", pl.Int64),
    ("check_kind", pl.String),
    ("check_name", pl.String),
    ("check_field", pl.String),
    ("tier", pl.String),
    ("status", pl.String),
    ("passed", pl.Boolean),
    ("score", pl.Float64),
    ("detail", pl.String),
    ("skipped_reason", pl.String),
    ("error", pl.String),
    ("judge_model", pl.String),
    ("judge_model_version", pl.String),
    ("judge_reasoning", pl.String),
    ("judge_input_tokens", pl.Int64),
    ("judge_output_tokens", pl.Int64),
    ("judge_cost_usd", pl.Float64),
    ("judge_latency_s", pl.Float64),
    ("judge_cache_hit", pl.Boolean),
]
CRITERIA = pl.List(pl.Struct({"criterion": pl.String, "met": pl.Boolean, "evidence": pl.String}))
# and as version 2 writes it: a change here is a change of file format (bump RESULTS_SCHEMA_VERSION).
ON_DISK_V2 = [
    *ON_DISK_V1[:14],
    ("case_error_kind", pl.String),
    *ON_DISK_V1[14:30],
    ("error_kind", pl.String),
    *ON_DISK_V1[30:33],
    ("judge_criteria", CRITERIA),
    *ON_DISK_V1[33:],
]


def test_derived_schema_is_the_on_disk_schema() -> None:
    assert list(CHECK_ROW_SCHEMA.items()) == ON_DISK_V2
    assert RESULTS_SCHEMA_VERSION == 2
    added = {c for c, _ in ON_DISK_V2} - {c for c, _ in ON_DISK_V1}
    assert added == ADDED_COLUMNS == {"case_error_kind", "error_kind", "judge_criteria"}


def test_criteria_struct_is_the_rubric_verdicts_criterion() -> None:
    from evalkit.graders._judge import CriterionVerdict

    assert [f.name for f in CRITERIA.inner.fields] == list(CriterionVerdict.model_fields)  # type: ignore[attr-defined]


def test_error_kinds_include_every_call_error_kind() -> None:
    from evalkit.errors import CallErrorKind

    assert get_args(CallErrorKind) == CALL_ERROR_KINDS
    assert set(CALL_ERROR_KINDS) < set(ERROR_KINDS) and len(set(ERROR_KINDS)) == len(ERROR_KINDS)


def test_every_model_field_is_a_column_or_deliberately_left_out() -> None:
    assert set(CaseResult.model_fields) == set(CASE_COLUMNS) | CASE_FIELDS_NOT_IN_FRAME
    assert not set(CASE_COLUMNS) & CASE_FIELDS_NOT_IN_FRAME
    assert set(CheckResult.model_fields) == set(CHECK_COLUMNS) | CHECK_FIELDS_NOT_IN_FRAME
    assert len(set(CASE_COLUMNS.values()) | set(CHECK_COLUMNS.values())) == len(CHECK_ROW_SCHEMA)


def test_statuses_come_from_the_models() -> None:
    assert CHECK_STATUSES == get_args(CheckStatus) == ("pass", "fail", "skipped", "not_judged", "error")
    assert CASE_STATUSES == get_args(CaseStatus) == ("pass", "fail", "error", "not_scored")
    from evalkit.stats._frames import CHECK_STATUSES as stats_check
    from evalkit.stats._frames import VERDICT_STATUSES as stats_verdict

    assert stats_check is CHECK_STATUSES and stats_verdict is CASE_STATUSES


def sample() -> CaseResult:
    checks = [
        CheckResult(
            index=0, kind="exact", name="exact", field="label", tier="exact", status="pass", passed=True
        ),
        CheckResult(
            index=1,
            kind="judge",
            name="judge",
            tier="judge",
            status="fail",
            passed=False,
            judge_criteria=[{"criterion": "Polite", "met": False, "evidence": "go away"}],
            judge_cost_usd=0.002,
        ),
    ]
    return CaseResult(
        run_id="r1",
        suite="s",
        suite_version="v1",
        case_id="c1",
        slice="a",
        status="fail",
        output={"label": "é"},
        system="baseline",
        request_id="req_1",
        cost_usd=0.01,
        checks=checks,
    )


def test_check_rows_flatten_one_row_per_check() -> None:
    rows = check_rows([sample()])
    assert rows.schema == pl.Schema(CHECK_ROW_SCHEMA)
    assert rows.height == 2
    first = rows.row(0, named=True)
    assert first["case_status"] == "fail" and first["status"] == "pass" and first["check_field"] == "label"
    assert json.loads(first["output"]) == {"label": "é"} and first["cache_hit"] is False
    assert rows["judge_cost_usd"].to_list() == [None, 0.002]
    assert rows["judge_criteria"].to_list() == [
        None,
        [{"criterion": "Polite", "met": False, "evidence": "go away"}],
    ]
    assert check_rows([]).schema == pl.Schema(CHECK_ROW_SCHEMA)


def manifest() -> Manifest:
    return Manifest(run_id="r1", suite="s", suite_version="v1", suite_path="s", cases=1, system={})


def test_load_run_reads_parquet_and_journal_alike(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r1")
    run.write_manifest(manifest())
    run.finalize([sample()])
    _, from_parquet = read_run(run.path)
    run.parquet_path.unlink()
    _, from_journal = read_run(run.path)
    assert from_parquet.equals(from_journal) and from_parquet.schema == pl.Schema(CHECK_ROW_SCHEMA)


def test_load_run_refuses_a_parquet_that_is_not_a_results_file(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r1")
    run.write_manifest(manifest())
    pl.DataFrame({"case_id": ["c1"], "status": ["pass"]}).write_parquet(run.parquet_path)
    with pytest.raises(EvalkitError, match=r"results.parquet: not an evalkit results file \(missing columns"):
        read_run(run.path)
