"""Seeing what failed: failing cases listed (terminal and HTML), judge criteria, flaky cases, the headline."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit._baseline import load_reference
from evalkit._report import build_report, format_report, format_summary, render_html
from evalkit._results import CaseResult, CheckResult, Manifest, RunDir, read_run
from evalkit.graders import NOT_JUDGED

N = 30
SLICES = ("easy", "hard")


def judge_check(i: int, passed: bool | None) -> CheckResult:
    if passed is None:
        return CheckResult(
            index=1, kind="judge", name="quality", tier="judge", status="skipped", skipped_reason=NOT_JUDGED
        )
    return CheckResult(
        index=1,
        kind="judge",
        name="quality",
        tier="judge",
        status="pass" if passed else "fail",
        passed=passed,
        detail="1/2 criteria met" if not passed else "2/2 criteria met",
        judge_model="claude-judge",
        judge_reasoning=f"the reply to ticket {i} never apologises",
        judge_criteria=[
            {"criterion": "Answers the question", "met": True, "evidence": "the answer"},
            {"criterion": "Apologises", "met": passed, "evidence": "" if passed else "no sorry here"},
        ],
    )


def make_run(
    root: Path,
    run_id: str,
    fails: set[int],
    *,
    repeats: int = 1,
    flaky: set[int] = frozenset(),
    awaiting: set[int] = frozenset(),
    prompt_hash: str = "p1",
) -> Path:
    suite = root / "suite"
    suite.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"id": f"c{i:02d}", "input": {"body": f"ticket {i}"}, "expected": "yes"}) for i in range(N)
    ]
    (suite / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = []
    for i in range(N):
        for r in range(repeats):
            bad = i in fails or (i in flaky and r == 0)
            judged: bool | None = None if i in awaiting else not bad
            exact = CheckResult(index=0, kind="exact", name="exact", tier="exact", status="pass", passed=True)
            status = "not_scored" if i in awaiting else ("fail" if bad else "pass")
            results.append(
                CaseResult(
                    run_id=run_id,
                    suite="s",
                    suite_version="v1",
                    case_id=f"c{i:02d}",
                    slice=SLICES[i % 2],
                    repeat=r,
                    status=status,
                    output=f"reply {i}",
                    system="py",
                    cost_usd=0.0,
                    latency_s=0.01,
                    checks=[exact, judge_check(i, judged)],
                )
            )
    run = RunDir(root / "runs" / run_id)
    run.write_manifest(
        Manifest(
            run_id=run_id,
            suite="s",
            suite_version="v1",
            suite_path=str(suite),
            cases=N,
            repeats=repeats,
            system={"kind": "python", "name": "py", "prompt_hash": prompt_hash},
            status="complete",
        )
    )
    run.finalize(results)
    return run.path


def test_terminal_summary_lists_the_failing_cases(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", set(range(12)))
    manifest, rows = read_run(run)
    text = format_summary(manifest, rows)
    assert "failing cases (12, first 10):" in text
    assert "c09" in text and "c10" not in text and "... and 2 more" in text
    assert "fail: quality: 1/2 criteria met" in text
    every = format_summary(manifest, rows, show_failures="all")
    assert "c11" in every and "more" not in every
    three = format_report(build_report(manifest, rows, run_dir=run), show_failures=3)
    assert "first 3" in three and "c03" not in three.split("failing cases")[1]
    # the judge's criteria come from results.jsonl when the run folder is known
    assert 'not met: Apologises (evidence: "no sorry here")' in three


def test_html_lists_failing_cases_with_judge_criteria(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", {1, 2, 5})
    manifest, rows = read_run(run)
    page = render_html(build_report(manifest, rows, run_dir=run))
    table = page[page.index('<table id="failures">') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr data-slice") == 3
    assert 'data-slice="hard"' in table and "&quot;quality&quot;" in table
    assert "not met: Apologises" in table and "no sorry here" in table
    assert "the reply to ticket 5 never apologises" in table
    assert "ticket 5" in table and "reply 5" in table  # input and output
    assert 'id="failure-filters"' in page


def test_html_headline_shows_bounds_while_cases_await_the_judge(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", {0}, awaiting=set(range(10, 30)))
    manifest, rows = read_run(run)
    page = render_html(build_report(manifest, rows))
    assert "<b>not known yet</b>: between 30.0% and 96.7%" in page
    assert "pass rate <b>0.0%</b>" not in page and "pass rate <b>90.0%</b>" not in page


def test_flaky_cases_are_named(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", set(), repeats=3, flaky={4, 7})
    manifest, rows = read_run(run)
    report = build_report(manifest, rows)
    assert report.flaky == ["c04", "c07"]
    assert "flaky (verdict differs across repeats): c04, c07" in format_report(report)
    assert "<code>c04</code>, <code>c07</code>" in render_html(report)


def test_a_prompt_change_and_the_gate_verdict_are_shown(tmp_path: Path) -> None:
    before = make_run(tmp_path / "a", "a", set(), prompt_hash="p1")
    after = make_run(tmp_path / "b", "b", {3}, prompt_hash="p2")
    manifest, rows = read_run(after)
    report = build_report(manifest, rows, load_reference(before))
    assert "system prompt (hash): p1 -> p2" in format_report(report)

    class Outcome:
        exit_code = 1
        text = "FAIL: the pass rate dropped 3.3 pts"

    page = render_html(report, gate=Outcome())
    assert "gate FAILED" in page and "system prompt (hash): p1 -&gt; p2" in page


def test_a_single_run_has_no_one_bar_latency_chart(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", {1})
    manifest, rows = read_run(run)
    page = render_html(build_report(manifest, rows))
    cost = page[page.index("<h2>Cost and latency</h2>") :]
    assert "<svg" not in cost.split("<h2>")[1] and "p95 latency" in cost


def test_the_summary_names_the_models_that_answered_and_a_criterion_only_once(tmp_path: Path) -> None:
    judged = judge_check(0, False).model_copy(
        update={
            "judge_model_version": "simulated-judge",
            "detail": "1/2 criteria met: not met: Apologises",
            "judge_criteria": [{"criterion": "Apologises", "met": False, "evidence": ""}],
        }
    )
    result = CaseResult(
        run_id="r",
        suite="s",
        suite_version="v1",
        case_id="c00",
        slice="easy",
        status="fail",
        output="reply",
        system="claude",
        system_model="claude-sonnet-4-6",
        system_model_version="simulated-claude-sonnet-4-6",
        checks=[judged],
    )
    run = RunDir(tmp_path / "r")
    manifest = Manifest(
        run_id="r",
        suite="s",
        suite_version="v1",
        suite_path=str(tmp_path),
        cases=1,
        repeats=1,
        system={"kind": "claude", "name": "claude", "model": "claude-sonnet-4-6"},
        judge={"model": "claude-judge"},
        status="complete",
    )
    run.write_manifest(manifest)
    run.finalize([result])
    manifest, rows = read_run(run.path)
    head = format_summary(manifest, rows, criteria={}).splitlines()[0]
    assert "system claude (claude-sonnet-4-6 -> simulated-claude-sonnet-4-6)" in head
    assert "judge claude-judge -> simulated-judge" in head
    text = format_report(build_report(manifest, rows, run_dir=run.path))
    assert text.count("not met: Apologises") == 1  # the case's line says it; no second line repeats it


def test_a_change_that_rounds_to_zero_is_never_minus_zero() -> None:
    from evalkit._report import ci_pts, pct, pts

    assert ci_pts(-1e-17, 0.793) == "+0.0 to +79.3 pts"
    assert pts(-0.0001) == "+0.0 pts" and pct(-1e-12) == "0.0%"
    assert pts(-0.012) == "-1.2 pts"
