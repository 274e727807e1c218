"""Case verdicts: status precedence, not-judged checks, costs."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from stats_testdata import (
    check_row,
    rows_frame,
)

import evalkit.stats as stats


def test_case_verdict_status_precedence_and_passed() -> None:
    rows = rows_frame(
        [
            check_row(case_id="err", status="error", passed=None),
            check_row(case_id="err", status="fail"),
            check_row(case_id="err", status="pass"),
            check_row(case_id="fail", status="fail"),
            check_row(case_id="fail", status="pass"),
            check_row(case_id="fail", tier="judge", status="skipped", passed=None),
            check_row(case_id="pass", status="pass"),
            check_row(case_id="pass", tier="judge", status="skipped", passed=None),
            check_row(case_id="none", tier="judge", status="skipped", passed=None),
        ]
    )
    v = stats.case_verdicts(rows)
    got = {r["case_id"]: (r["status"], r["passed"]) for r in v.iter_rows(named=True)}
    assert got == {
        "err": ("error", None),
        "fail": ("fail", False),
        "pass": ("pass", True),
        "none": ("not_scored", None),
    }
    assert v.select("n_checks", "n_pass", "n_fail", "n_error", "n_skipped").sum().row(0) == (9, 3, 2, 1, 3)


NOT_JUDGED = "not judged: no judge available"
CHEAPER_FAILED = "cheaper check failed: exact"


def test_case_verdict_not_judged_is_not_a_pass() -> None:
    def judge(status: str, reason: str | None = None) -> dict[str, Any]:
        return {"tier": "judge", "status": status, "skipped_reason": reason}

    cases: dict[str, list[dict[str, Any]]] = {
        "pass+unjudged": [{"status": "pass"}, judge("not_judged", NOT_JUDGED)],
        "fail+unjudged": [{"status": "fail"}, judge("skipped", CHEAPER_FAILED)],
        "fail+nokey": [{"status": "fail"}, judge("not_judged", NOT_JUDGED)],
        "error+unjudged": [{"status": "error"}, judge("not_judged", NOT_JUDGED)],
        "pass+judged": [{"status": "pass"}, judge("pass")],
        "pass+skipped": [{"status": "pass"}, judge("skipped", CHEAPER_FAILED)],
        "only-unjudged": [judge("not_judged", NOT_JUDGED)],
    }
    rows = rows_frame(
        [
            check_row(case_id=case, **{k: v for k, v in c.items() if k != "skipped_reason"})
            for case, cs in cases.items()
            for c in cs
        ]
    ).with_columns(
        pl.Series("skipped_reason", [c.get("skipped_reason") for cs in cases.values() for c in cs])
    )
    got = {r["case_id"]: r["status"] for r in stats.case_verdicts(rows).iter_rows(named=True)}
    assert got == {
        "pass+unjudged": "not_scored",
        "fail+unjudged": "fail",
        "fail+nokey": "fail",
        "error+unjudged": "error",
        "pass+judged": "pass",
        "pass+skipped": "pass",
        "only-unjudged": "not_scored",
    }
    # The same rule as the results module's per-case status.
    results = pytest.importorskip("evalkit._results")
    for case, checks in cases.items():
        objs = [
            results.CheckResult(
                index=i,
                kind="k",
                name="k",
                tier=c.get("tier", "exact"),
                status=c["status"],
                skipped_reason=c.get("skipped_reason"),
            )
            for i, c in enumerate(checks)
        ]
        assert results.case_status(objs) == got[case], case
    # The status alone says it: the reason is for people.
    assert stats.case_verdicts(rows.drop("skipped_reason")).equals(stats.case_verdicts(rows))


def test_case_verdicts_one_row_per_run_case_repeat() -> None:
    rows = rows_frame(
        [
            check_row(run_id=run, case_id=case, repeat=rep, check_kind=kind, slice="billing", split="holdout")
            for run in ("a", "b")
            for case in ("c1", "c2")
            for rep in (0, 1, 2)
            for kind in ("exact", "regex")
        ]
    )
    v = stats.case_verdicts(rows)
    assert v.height == 2 * 2 * 3
    assert v.select("run_id", "case_id", "repeat").is_duplicated().sum() == 0
    assert set(v.get_column("slice")) == {"billing"} and set(v.get_column("split")) == {"holdout"}


def test_case_verdict_costs_and_latency() -> None:
    rows = rows_frame(
        [
            # System cost repeats on each check row; judge cost sums over judged checks.
            check_row(case_id="known", cost_usd=0.02, latency_s=1.5),
            check_row(
                case_id="known",
                cost_usd=0.02,
                latency_s=1.5,
                tier="judge",
                judge_cost_usd=0.003,
                judge_latency_s=2.0,
            ),
            check_row(
                case_id="known",
                cost_usd=0.02,
                latency_s=1.5,
                tier="judge",
                judge_cost_usd=0.004,
                judge_latency_s=3.0,
            ),
            # A skipped judge was not run: its null cost is no cost, not an unknown one.
            check_row(case_id="skip", cost_usd=0.01, status="fail"),
            check_row(case_id="skip", cost_usd=0.01, tier="judge", status="skipped", passed=None),
            # Unknown system cost.
            check_row(case_id="sys?", cost_usd=None),
            check_row(case_id="sys?", cost_usd=None, tier="judge", judge_cost_usd=0.002),
            # A judge that ran without a recorded cost.
            check_row(
                case_id="judge?", cost_usd=0.01, tier="judge", judge_cost_usd=None, judge_latency_s=1.0
            ),
        ]
    )
    v = stats.case_verdicts(rows)
    got = {r["case_id"]: r for r in v.iter_rows(named=True)}
    known = got["known"]
    assert known["system_cost_usd"] == pytest.approx(0.02, abs=1e-15)
    assert known["judge_cost_usd"] == pytest.approx(0.007, abs=1e-15)
    assert known["cost_usd"] == pytest.approx(0.027, abs=1e-15)
    assert known["latency_s"] == 1.5 and known["judge_latency_s"] == pytest.approx(5.0)
    assert got["skip"]["cost_usd"] == pytest.approx(0.01) and got["skip"]["judge_cost_usd"] == 0.0
    assert got["sys?"]["system_cost_usd"] is None and got["sys?"]["cost_usd"] is None
    assert got["sys?"]["judge_cost_usd"] == pytest.approx(0.002)
    assert got["judge?"]["judge_cost_usd"] is None and got["judge?"]["cost_usd"] is None
    assert got["judge?"]["system_cost_usd"] == pytest.approx(0.01)


def test_case_verdicts_rejects_unknown_status_and_missing_columns() -> None:
    with pytest.raises(ValueError, match="unknown status"):
        stats.case_verdicts(rows_frame([check_row(status="passed")]))
    with pytest.raises(ValueError, match="missing columns"):
        stats.case_verdicts(rows_frame([check_row()]).drop("tier"))


def test_case_verdicts_empty() -> None:
    v = stats.case_verdicts(rows_frame([]))
    assert v.height == 0 and "status" in v.columns
