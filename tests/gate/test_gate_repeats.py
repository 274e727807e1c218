"""Runs with repeats: the case is the unit. A run gates against its own baseline.json at +0.0, a baseline file and
the run directory give the same numbers, and a drop within cases is significant by the sign-flip test."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit._baseline import accept, dump_baseline, load_baseline, load_reference
from evalkit._gate import GateVerdict, run_gate
from evalkit._report import build_report, ci_pts, format_report, pct, pts, pval, render_html
from evalkit._results import CaseResult, CheckResult, Manifest, RunDir, read_run
from evalkit.api import load_run
from evalkit.cli import main

SLICES = ("alpha", "beta", "gamma")
Status = Callable[[int, int], str]


def make_run(root: Path, run_id: str, status: Status, *, cases: int, repeats: int) -> Path:
    """A finished run of a synthetic suite: case i's repeat r has verdict ``status(i, r)``."""
    suite = root / "suite"
    suite.mkdir(parents=True, exist_ok=True)
    rows = [json.dumps({"id": f"c{i:02d}", "input": i, "expected": "yes"}) for i in range(cases)]
    (suite / "cases.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    results = []
    for i in range(cases):
        for r in range(repeats):
            st = status(i, r)
            check = CheckResult(
                index=0, kind="exact", name="exact", tier="exact", status=st, passed=st == "pass", detail=""
            )
            results.append(
                CaseResult(
                    run_id=run_id,
                    suite="flaky",
                    suite_version="v1",
                    case_id=f"c{i:02d}",
                    slice=SLICES[i % 3],
                    repeat=r,
                    status=st,  # type: ignore[arg-type]
                    output="yes" if st == "pass" else "no",
                    system="python",
                    checks=[check],
                )
            )
    run = RunDir(root / "runs" / run_id)
    run.write_manifest(
        Manifest(
            run_id=run_id,
            suite="flaky",
            suite_version="v1",
            suite_path=str(suite),
            cases=cases,
            repeats=repeats,
            system={"kind": "python", "name": "synthetic"},
            status="complete",
        )
    )
    run.finalize(results)
    return run.path


# 40 cases, 5 repeats: case i passes a repeat with a rate between 0 and 1 that depends on i
def flaky(i: int, r: int) -> str:
    return "pass" if (i * 7 + r * 3) % 10 < i % 11 else "fail"


FLAKY_PREDICT = """
import itertools, collections
_calls = collections.defaultdict(itertools.count)
# case n passes 0, 3, 4 or 2 of every 5 calls (a fixed pattern per case, whatever order the calls come in):
# a pass rate of 45% over repeats, 50% by majority verdicts
def predict(input):
    n = int(input)
    return "yes" if next(_calls[n]) % 5 < (0, 3, 4, 2)[n % 4] else "no"
"""


def test_a_run_gates_against_its_own_baseline_json_at_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 23, reproduction 1: `evalkit run flaky.jsonl --repeats 5`, `baseline accept --no-outputs`, `gate RUN
    # --baseline base.json` printed "65.0% -> 61.0% change -4.0 pts ... FAIL": baseline.json kept one majority
    # verdict per case and the gate subtracted it from the run's case means.
    rows = [
        {"id": f"c{i:02d}", "input": str(i), "expected": "yes", "grader": "exact", "slice": "abcde"[i % 5]}
        for i in range(40)
    ]
    suite = tmp_path / "flaky.jsonl"
    suite.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "flaky_sys.py").write_text(FLAKY_PREDICT, encoding="utf-8")
    run_dir = tmp_path / "runs" / "flaky-run"
    argv = ["run", str(suite), "--system", f"{tmp_path / 'flaky_sys.py'}:predict", "--repeats", "5"]
    argv += ["--cache", "off", "--concurrency", "1", "-q", "--out", str(run_dir)]
    assert main(argv) == 0
    base = tmp_path / "base.json"
    assert main(["baseline", "accept", str(run_dir), "--no-outputs", "--to", str(base)]) == 0
    capsys.readouterr()
    assert main(["gate", str(run_dir), "--baseline", str(base)]) == 0
    out = capsys.readouterr().out
    assert "change +0.0 pts" in out and "PASS: the pass rate changed +0.0 pts" in out, out
    assert "sign-flip p = 1" in out and "no slice moved" in out
    # the report of the identical run: every per-slice change is 0, in the text and in the HTML table
    manifest, checks = read_run(run_dir)
    report = build_report(manifest, checks, load_reference(base))
    assert report.comparison is not None
    slices = report.comparison.slices
    assert slices.height == 5 and slices.get_column("diff").to_list() == [0.0] * 5
    assert not slices.get_column("significant").any()
    assert "no slice moved" in format_report(report)
    page = render_html(report)
    table = page[page.index("<h2>Change by slice</h2>") :]
    table = table[: table.index("</table>")]
    body = table.split("<tbody>")[1]
    changes = [re.findall(r"<td[^>]*>(.*?)</td>", row)[4] for row in body.split("</tr>") if "<td" in row]
    assert changes == ["+0.0 pts"] * 5


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("repeats")
    return {
        "base": make_run(root, "base", flaky, cases=40, repeats=5),
        # a change that breaks some repeats of every fifth case and mends one case
        "after": make_run(
            root,
            "after",
            lambda i, r: "fail" if i % 5 == 0 and r < 3 else ("pass" if i == 1 else flaky(i, r)),
            cases=40,
            repeats=5,
        ),
        "root": root,
    }


def test_baseline_json_and_the_run_directory_give_the_same_verdict_and_numbers(
    repeated: dict[str, Path], tmp_path: Path
) -> None:
    with_outputs = accept(repeated["base"], to=tmp_path / "a" / "baseline.json").path
    bare = accept(repeated["base"], to=tmp_path / "b" / "baseline.json", outputs=False).path
    for run in ("base", "after"):
        outcomes = [run_gate(repeated[run], ref) for ref in (repeated["base"], with_outputs, bare)]
        papers = [o.comparison.paired for o in outcomes]
        numbers = {
            (p.n, p.rate_a, p.rate_b, p.diff, p.ci_low, p.ci_high, p.p, p.test, p.table[0][1]) for p in papers
        }
        assert len(numbers) == 1, numbers
        assert len({o.decision.verdict for o in outcomes}) == 1
        slices = [o.comparison.slices.drop("slice") for o in outcomes]
        assert all(s.equals(slices[0]) for s in slices[1:])
        lines = {
            "\n".join(o.lines[1:]).replace(str(ref), "REF")
            for o, ref in zip(outcomes[1:], (with_outputs, bare), strict=True)
        }
        assert len(lines) == 1
    same = run_gate(repeated["base"], bare)
    assert same.comparison.paired.diff == 0.0 and same.decision.verdict is GateVerdict.PASS


def test_a_baseline_of_majority_verdicts_says_so_and_compares_majorities(
    repeated: dict[str, Path], tmp_path: Path
) -> None:
    # a format-2 file accepted before baseline.json kept each repeat's verdict
    target = accept(repeated["base"], to=tmp_path / "baseline.json", outputs=False).path
    old = load_baseline(target).model_copy(update={"format_version": 2, "repeats": None})
    target.write_text(dump_baseline(old), encoding="utf-8")
    assert load_baseline(target).format_version == 2
    outcome = run_gate(repeated["base"], target)
    p = outcome.comparison.paired
    # the run's own majority verdicts against the file's: nothing changed, McNemar's test on one verdict a side
    assert p.diff == 0.0 and p.test == "mcnemar" and outcome.exit_code == 0
    note = outcome.comparison.note
    assert note is not None and "5-repeat run" in note and "Re-save the baseline" in note
    assert f"note: {note}" in outcome.text
    manifest, checks = read_run(repeated["base"])
    report = build_report(manifest, checks, load_reference(target))
    assert note in format_report(report) and "majority verdicts on both sides" in render_html(report)


def test_a_drop_within_cases_is_significant_and_require_significant_fails(tmp_path: Path) -> None:
    # issue 23, reproduction 2: 40 cases passing 3/3 against 38 of them passing 2/3, a -31.7-point drop, had
    # McNemar p = 1 on majority verdicts and the gate passed with --require-significant.
    before = make_run(tmp_path, "before", lambda i, r: "pass", cases=40, repeats=3)
    after = make_run(
        tmp_path, "after", lambda i, r: "fail" if i < 38 and r == 2 else "pass", cases=40, repeats=3
    )
    outcome = run_gate(after, before, require_significant=True)
    p = outcome.comparison.paired
    assert p.diff == pytest.approx(-38 / 120) and p.mcnemar_exact_p == 1.0
    assert p.test == "sign-flip" and p.significant and p.p == pytest.approx(2 / 2**38)
    assert outcome.decision.verdict is GateVerdict.FAIL_DROP and outcome.exit_code == 1
    assert outcome.decision.test == "sign-flip" and outcome.decision.p == p.p
    assert (
        "the sign-flip test on case pass rates calls the drop significant (p = 7.3e-12 < 0.05)"
        in outcome.text
    )
    assert "sign-flip p = 7.3e-12" in outcome.text
    assert (
        "slices that moved (* = the sign-flip test on case pass rates calls it significant)" in outcome.text
    )
    # the same runs through the command line: exit 1, and the JUnit file names the test and its p
    junit = tmp_path / "junit.xml"
    assert (
        main(["gate", str(after), "--baseline", str(before), "--require-significant", "--junit", str(junit)])
        == 1
    )
    props = {e.get("name"): e.get("value") for e in ET.parse(junit).getroot().iter("property")}
    assert props["paired_test"] == "sign-flip" and float(props["paired_p"]) == pytest.approx(
        2 / 2**38, rel=1e-5
    )
    # and in a notebook: the comparison's summary carries the same test, p and flag
    summary = load_run(after).compare(before).summary()
    assert (summary["test"], summary["significant"]) == ("sign-flip", True)
    assert summary["p"] == p.p and summary["mcnemar_p"] == 1.0
    # the report stars the slices by the same test, and the HTML table heads its p column with it
    manifest, checks = read_run(after)
    report = build_report(manifest, checks, load_reference(before))
    assert report.comparison is not None and report.comparison.slices.get_column("significant").all()
    assert "sign-flip p</th>" in render_html(report)
    assert "of the sign-flip test" in format_report(report)  # the MDE is the power of the same test


def test_the_gate_text_with_one_repeat_is_unchanged(tmp_path: Path) -> None:
    # With one repeat the paired test is McNemar's exact test, named and printed as before: the lines are the
    # ones the gate printed before it learned about repeats (numbers through the shared formatters).
    before = make_run(tmp_path, "before", lambda i, r: "pass" if i % 2 else "fail", cases=40, repeats=1)
    after = make_run(
        tmp_path,
        "after",
        lambda i, r: (
            "fail" if i % 6 in (1, 3) or i in (1, 5, 25) else ("pass" if i in (2, 4) or i % 2 else "fail")
        ),
        cases=40,
        repeats=1,
    )
    outcome = run_gate(after, before, require_significant=True)
    p = outcome.comparison.paired
    assert p.test == "mcnemar" and p.p == p.mcnemar_exact_p and p.significant
    lines = outcome.text.splitlines()
    assert lines[2] == (
        f"  pass rate {pct(p.rate_a)} -> {pct(p.rate_b)}   change {pts(p.diff)}  95% CI "
        f"{ci_pts(p.ci_low, p.ci_high)}   McNemar exact p = {pval(p.mcnemar_exact_p)}"
    )
    assert "  slices that moved (* = McNemar's exact test calls it significant):" in lines
    assert lines[-1] == (
        f"FAIL: the pass rate dropped {100 * outcome.decision.drop:.1f} pts, more than the allowed 2.0 pts, and "
        f"McNemar's exact test calls the drop significant (p = {pval(p.mcnemar_exact_p)} < 0.05)"
    )
    assert "sign-flip" not in outcome.text and "note:" not in outcome.text
    noisy = run_gate(after, before, max_drop=0.5, require_significant=True)
    assert noisy.decision.reason == "PASS: the pass rate dropped 32.5 pts, within the allowed 50.0 pts"
