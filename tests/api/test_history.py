"""What changed between two runs (`setup_changes`, `RunComparison.changes`) and a suite's history (`ek.history`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalkit as ek
from evalkit._baseline import RunInfo, run_changes
from evalkit._results import CaseResult, CheckResult, Manifest, RunDir
from evalkit.api import setup_changes
from evalkit.errors import EvalkitError

ROOT = Path(__file__).resolve().parents[2]
TRIAGE = ROOT / "goldens" / "support-triage"


def info(**overrides: Any) -> RunInfo:
    fields: dict[str, Any] = {
        "run_id": "a",
        "suite": "s",
        "suite_version": "v1",
        "started_at": None,
        "system_name": "claude",
        "system_model": "claude-x",
        "system_model_versions": ("claude-x-1",),
        "prompt_hash": "p1",
        "judge_model": "claude-j",
        "judge_model_versions": ("claude-j-1",),
        "code_hash": None,
        "judge_prompt_hash": "j1",
    }
    return RunInfo(**(fields | overrides))


def test_every_part_is_listed_and_the_changed_ones_read_as_the_report_words_them() -> None:
    a = info()
    b = info(
        run_id="b",
        suite_version="v2",
        prompt_hash="p2",
        system_model_versions=("claude-x-2",),
        judge_prompt_hash="j2",
        judge_model_versions=("claude-j-1", "claude-j-2"),
    )
    frame = setup_changes(a, b)
    assert frame.columns == ["what", "before", "after", "changed"]
    assert frame.get_column("what").to_list() == [
        "suite version",
        "system",
        "system prompt (hash)",
        "system model",
        "resolved system model",
        "system code (hash)",
        "judge model",
        "judge prompt (hash)",
        "resolved judge model",
    ]
    changed = frame.filter(pl.col("changed"))
    lines = [f"{r['what']}: {r['before']} -> {r['after']}" for r in changed.iter_rows(named=True)]
    assert lines == run_changes(a, b)
    assert len(lines) == 5
    row = frame.filter(pl.col("what") == "resolved judge model").row(0, named=True)
    assert (row["before"], row["after"]) == ("claude-j-1", "claude-j-1, claude-j-2")
    # unchanged parts keep their values on both sides
    model = frame.filter(pl.col("what") == "system model").row(0, named=True)
    assert (model["before"], model["after"], model["changed"]) == ("claude-x", "claude-x", False)


def test_a_part_one_side_did_not_record_is_not_a_change() -> None:
    a = info(code_hash=None, system_model_versions=())
    b = info(run_id="b", code_hash="c2", system_model_versions=("claude-x-9",))
    frame = setup_changes(a, b)
    assert not frame.get_column("changed").any()
    assert run_changes(a, b) == []
    code = frame.filter(pl.col("what") == "system code (hash)").row(0, named=True)
    assert (code["before"], code["after"]) == (None, "c2")


def test_a_comparison_lists_what_changed_between_two_real_runs(tmp_path: Path) -> None:
    suite = ek.load_suite(TRIAGE)

    def always_billing(case_input: Any) -> str:
        return "billing"

    before = ek.run(suite, "baseline", runs_dir=tmp_path, progress=False)
    after = ek.run(suite, always_billing, runs_dir=tmp_path, progress=False)
    changes = after.compare(before).changes()
    got = {r["what"]: r for r in changes.iter_rows(named=True)}
    assert got["system"]["before"] == "baseline" and got["system"]["after"].endswith(":always_billing")
    assert got["system"]["changed"]
    # both runs record a code hash (the baseline's file, the notebook function's source): they differ
    assert got["system code (hash)"]["changed"]
    assert got["suite version"]["before"] == got["suite version"]["after"] == suite.version
    assert not got["suite version"]["changed"]
    # the same against the committed baseline.json, and it agrees with the report's own lines
    cmp = after.compare(TRIAGE / "baseline.json")
    rows = cmp.changes().filter(pl.col("changed"))
    assert [f"{r['what']}: {r['before']} -> {r['after']}" for r in rows.iter_rows(named=True)] == (
        cmp.comparison.changes
    )


# -- history ----------------------------------------------------------------------------------------------


def write_run(
    root: Path,
    run_id: str,
    started_at: str,
    passes: int,
    *,
    suite: str = "nightly",
    system: str = "claude",
    model_version: str | None = None,
    judge_version: str | None = None,
    status: str = "complete",
    cases: int = 20,
) -> Path:
    """A synthetic run: `passes` of `cases` pass, every row resolved to `model_version`."""
    results = []
    for i in range(cases):
        ok = i < passes
        checks = [
            CheckResult(
                index=0, kind="exact", name="exact", tier="exact", status="pass" if ok else "fail", passed=ok
            )
        ]
        if judge_version is not None:
            checks.append(
                CheckResult(
                    index=1,
                    kind="judge",
                    name="tone",
                    tier="judge",
                    status="pass",
                    passed=True,
                    judge_model="claude-j",
                    judge_model_version=judge_version,
                )
            )
        results.append(
            CaseResult(
                run_id=run_id,
                suite=suite,
                suite_version="v1",
                case_id=f"c{i:02d}",
                slice="s",
                status="pass" if ok else "fail",
                output="x",
                system=system,
                system_model="claude-x" if model_version else None,
                system_model_version=model_version,
                checks=checks,
            )
        )
    run = RunDir(root / run_id)
    run.write_manifest(
        Manifest(
            run_id=run_id,
            suite=suite,
            suite_version="v1",
            suite_path=str(root / "no-such-suite"),
            cases=cases,
            system={"name": system, "kind": "claude", "model": "claude-x" if model_version else None},
            judge={"model": "claude-j"} if judge_version else None,
            started_at=started_at,
            ended_at=started_at,
            status=status,  # type: ignore[arg-type]
        )
    )
    run.finalize(results)
    return run.path


@pytest.fixture()
def nightly(tmp_path: Path) -> Path:
    # written out of order: the history sorts by start time, not by folder name or write order
    write_run(
        tmp_path, "r3", "2026-11-03T02:00:00.000+00:00", 12, model_version="claude-x-2", judge_version="j1"
    )
    write_run(
        tmp_path, "r1", "2026-11-01T02:00:00.000+00:00", 16, model_version="claude-x-1", judge_version="j1"
    )
    write_run(
        tmp_path, "r2", "2026-11-02T02:00:00.000+00:00", 15, model_version="claude-x-1", judge_version="j1"
    )
    # another system's run in between does not break the chain of the claude runs' versions
    write_run(tmp_path, "b1", "2026-11-03T12:00:00.000+00:00", 10, system="baseline")
    write_run(
        tmp_path, "r4", "2026-11-04T02:00:00.000+00:00", 13, model_version="claude-x-2", judge_version="j2"
    )
    write_run(
        tmp_path,
        "r5",
        "2026-11-05T02:00:00.000+00:00",
        3,
        model_version="claude-x-2",
        judge_version="j2",
        status="interrupted",
    )
    return tmp_path


def test_history_is_oldest_first_and_marks_each_model_version_change(nightly: Path) -> None:
    h = ek.history(nightly, suite="nightly")
    assert h.get_column("run_id").to_list() == ["r1", "r2", "r3", "b1", "r4"]  # r5 is interrupted
    assert h.schema["started_at"] == pl.Datetime("us", "UTC")
    assert h.get_column("started_at").is_sorted()
    changes = dict(zip(h.get_column("run_id"), h.get_column("version_change"), strict=True))
    assert changes == {
        "r1": None,
        "r2": None,
        "r3": "system claude-x-1 → claude-x-2",
        "b1": None,
        "r4": "judge j1 → j2",
    }
    r3 = h.filter(pl.col("run_id") == "r3").row(0, named=True)
    assert (r3["system_model_version"], r3["judge_model_version"]) == ("claude-x-2", "j1")
    assert r3["rate"] == pytest.approx(12 / 20) and r3["n"] == 20
    # the same rate and interval `ek.runs` gives
    listed = ek.runs(nightly).filter(pl.col("run_id") == "r3").row(0, named=True)
    assert (r3["ci_low"], r3["ci_high"]) == (listed["ci_low"], listed["ci_high"])


def test_history_filters_by_system_and_can_keep_unfinished_runs(nightly: Path) -> None:
    claude = ek.history(nightly, suite="nightly", system="claude", complete_only=False)
    assert claude.get_column("run_id").to_list() == ["r1", "r2", "r3", "r4", "r5"]
    assert claude.get_column("status").to_list()[-1] == "interrupted"
    assert ek.history(nightly, system="baseline").get_column("run_id").to_list() == ["b1"]
    assert ek.history(nightly, suite="other").is_empty()


def test_history_asks_for_a_suite_when_the_folder_holds_several(nightly: Path) -> None:
    write_run(nightly, "x1", "2026-11-06T02:00:00.000+00:00", 5, suite="another")
    with pytest.raises(EvalkitError, match=r"several suites.*another, nightly.*suite="):
        ek.history(nightly)
    assert ek.history(nightly, suite="another").get_column("run_id").to_list() == ["x1"]
