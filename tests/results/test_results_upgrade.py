"""Runs written at results schema 1 still load and mean the same: not judged, error kinds, judge criteria.

tests/results/v1_run/ was written by evalkit at results schema version 1 (RunDir.finalize: its journal and its
results.parquet): a judge check without a judge is "skipped" with a "not judged" reason there, and no error has
a kind. It is read here as a run directory a user kept from then.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from evalkit._report import format_summary
from evalkit._results import (
    CHECK_ROW_SCHEMA,
    ERROR_KINDS,
    CaseResult,
    RunDir,
    error_kind,
    judge_criteria,
    read_run,
)
from evalkit._results._error_kinds import error_kind_of_message
from evalkit._runner._stops import cache_write_error
from evalkit.errors import CacheError, CacheMiss, CallError, CorruptCacheEntry, JudgeError
from evalkit.stats import case_verdicts

V1 = Path(__file__).parent / "v1_run"
# what each case's error (and each errored check's) is, as a kind
CASE_KINDS = {
    "c3": "system_exception",
    "c4": "auth",
    "c5": "connection",
    "c6": "rate_limit",
    "c7": "cache_miss",
    "c8": "cache_write",
}
CHECK_KINDS = {
    **{(c, i): k for c, k in CASE_KINDS.items() for i in (0, 1)},  # a case without output: its checks say why
    ("c9", 1): "cache_write",
    ("c10", 1): "judge_error",
    ("c11", 0): "check_exception",
    ("c12", 1): "overloaded",
}


@pytest.fixture
def v1_run(tmp_path: Path) -> Path:
    run = tmp_path / "v1_run"
    shutil.copytree(V1, run)
    return run


def test_the_fixture_is_in_the_old_form() -> None:
    text = (V1 / "results.jsonl").read_text(encoding="utf-8")
    assert '"status":"skipped","passed":null,"score":null,"detail":"","skipped_reason":"not judged' in text
    assert "error_kind" not in text and "not_judged" not in text
    schema = pl.read_parquet_schema(V1 / "results.parquet")
    assert "error_kind" not in schema and "judge_criteria" not in schema
    assert '"schema_version": 1' in (V1 / "manifest.json").read_text(encoding="utf-8")


def _check_kinds(rows: pl.DataFrame) -> dict[tuple[str, int], str]:
    errored = rows.filter(pl.col("error").is_not_null())
    return {(c, i): k for c, i, k in errored.select("case_id", "check_index", "error_kind").iter_rows()}


@pytest.mark.parametrize("source", ["parquet", "journal"])
def test_an_old_run_loads_in_the_new_schema(v1_run: Path, source: str) -> None:
    if source == "journal":
        (v1_run / "results.parquet").unlink()
    _, rows = read_run(v1_run)
    assert rows.schema == pl.Schema(CHECK_ROW_SCHEMA)
    judge = {c: s for c, s in rows.filter(pl.col("tier") == "judge").select("case_id", "status").iter_rows()}
    assert judge["c0"] == "not_judged" and judge["c1"] == "skipped" and judge["c2"] == "fail"
    assert rows.filter(pl.col("status") == "not_judged")["skipped_reason"].str.starts_with("not judged").all()
    cases = rows.unique("case_id").filter(pl.col("case_error").is_not_null())
    assert dict(cases.select("case_id", "case_error_kind").iter_rows()) == CASE_KINDS
    assert (
        rows.filter(pl.col("case_error").is_null())["case_error_kind"].null_count()
        == rows.filter(pl.col("case_error").is_null()).height
    )
    assert _check_kinds(rows) == CHECK_KINDS
    assert set(rows["error_kind"].drop_nulls()) <= set(ERROR_KINDS)


def test_an_old_run_means_the_same(v1_run: Path) -> None:
    _, rows = read_run(v1_run)
    verdicts = case_verdicts(rows)
    recorded = dict(rows.unique("case_id").select("case_id", "case_status").iter_rows())
    assert dict(verdicts.select("case_id", "status").iter_rows()) == recorded
    assert (
        recorded["c0"] == "not_scored"
        and verdicts.filter(pl.col("case_id") == "c0")["n_not_judged"].item() == 1
    )


def test_both_files_of_an_old_run_read_alike(v1_run: Path) -> None:
    _, from_parquet = read_run(v1_run)
    (v1_run / "results.parquet").unlink()
    _, from_journal = read_run(v1_run)
    # the old parquet never had the judge's criteria: only the journal kept them
    assert from_parquet.drop("judge_criteria").equals(from_journal.drop("judge_criteria"))
    assert from_parquet["judge_criteria"].null_count() == from_parquet.height
    assert from_journal.filter(pl.col("case_id") == "c2", pl.col("tier") == "judge")[
        "judge_criteria"
    ].to_list() == [[{"criterion": "Polite", "met": False, "evidence": "go away"}]]


def test_judge_criteria_of_an_old_run_come_from_its_journal(v1_run: Path) -> None:
    want = {("c2", 0, 1): [{"criterion": "Polite", "met": False, "evidence": "go away"}]}
    assert judge_criteria(v1_run) == want
    RunDir(v1_run).finish()  # as a resume finishes it: the parquet is written anew, with the column
    assert "judge_criteria" in pl.read_parquet_schema(v1_run / "results.parquet")
    (v1_run / "results.jsonl").unlink()
    assert judge_criteria(v1_run) == want


def test_finishing_an_old_journal_writes_the_new_schema(v1_run: Path) -> None:
    _, before = read_run(v1_run)
    RunDir(v1_run).finish()
    after = pl.read_parquet(v1_run / "results.parquet")
    assert after.schema == pl.Schema(CHECK_ROW_SCHEMA)
    assert after.drop("judge_criteria").equals(before.drop("judge_criteria"))
    assert _check_kinds(after) == CHECK_KINDS


def test_the_summary_of_an_old_run_counts_not_judged_and_groups_errors_by_kind(v1_run: Path) -> None:
    manifest, rows = read_run(v1_run)
    text = format_summary(manifest, rows)
    assert "1 judge checks not judged" in text
    assert "10 cases ended in an error" in text
    # one line per kind, the most common first: cache_write (c8, and c9's judge), then one each
    assert "    2 x CacheError: Cannot write" in text
    assert "and 6 other kinds of error" in text


def test_the_stop_rules_read_the_kind_of_old_results(v1_run: Path) -> None:
    results = {r.case_id: r for r in RunDir(v1_run).read_journal()}
    assert [c for c, r in sorted(results.items()) if cache_write_error(r)] == ["c8", "c9"]
    assert results["c4"].error_kind == "auth" and results["c5"].error_kind == "connection"


def test_a_new_result_keeps_its_kind() -> None:
    line = CaseResult(
        run_id="r",
        suite="s",
        suite_version="v",
        case_id="c",
        slice="s",
        status="error",
        system="x",
        error="ValueError: looks like CallError: auth",
        error_kind="system_exception",
    ).model_dump_json()
    assert CaseResult.model_validate_json(line).error_kind == "system_exception"


def test_error_kind_of_an_exception(tmp_path: Path) -> None:
    assert error_kind(CallError("rate_limit", 429, "slow"), "system_exception") == "rate_limit"
    assert error_kind(CacheMiss("k", tmp_path / "k.json"), "system_exception") == "cache_miss"
    assert error_kind(CorruptCacheEntry(tmp_path / "k.json", "bad"), "system_exception") == "cache_corrupt"
    assert error_kind(CacheError("cannot write"), "judge_error") == "cache_write"
    assert error_kind(JudgeError("no verdict"), "judge_error") == "judge_error"
    assert error_kind(ValueError("x"), "check_exception") == "check_exception"


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("CallError: bad_request 400: too long", "bad_request"),
        ("CallError: timeout: read timed out", "timeout"),
        ("CallError: nonsense 400: ?", "system_exception"),  # not a kind: the default
        ("EditedCacheEntry: Edited cache entry x", "cache_corrupt"),
        ("CorruptCacheEntry: Corrupt cache entry x", "cache_corrupt"),
        ("KeyError: 'CallError: auth'", "system_exception"),
    ],
)
def test_error_kind_of_an_old_message(message: str, kind: str) -> None:
    assert error_kind_of_message(message, "system_exception") == kind
