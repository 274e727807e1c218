"""The flipped-case drill-down, driven as a person drives it: pick a case in the list, read both sides."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalkit as ek
from evalkit._systems import load_system
from evalkit.widgets import FlippedCases

ROOT = Path(__file__).resolve().parents[2]
TRIAGE = ROOT / "goldens" / "support-triage"
EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[ek.Run, ek.Run, set[str], set[str]]:
    """The baseline system, and a changed one that breaks five passing cases and mends three failing ones."""
    suite = ek.load_suite(TRIAGE)
    folder = tmp_path_factory.mktemp("runs")
    before = ek.run(suite, "baseline", runs_dir=folder, repeats=2, progress=False)
    v = before.verdicts().filter(pl.col("repeat") == 0)
    passing = v.filter(pl.col("status") == "pass").get_column("case_id").to_list()
    failing = v.filter(pl.col("status") == "fail").get_column("case_id").to_list()
    broken, mended = set(passing[:5]), set(failing[:3])
    expected = {c.id: c.checks[0].expected for c in suite.cases}  # type: ignore[union-attr]
    ids = {json.dumps(c.input, sort_keys=True): c.id for c in suite.cases}
    good = load_system("baseline", suite)

    def changed(case_input: Any) -> Any:
        case_id = ids[json.dumps(case_input, sort_keys=True)]
        if case_id in broken:
            return EVIL
        return expected[case_id] if case_id in mended else good.fn(case_input)

    after = ek.run(suite, changed, runs_dir=folder, repeats=2, progress=False)
    return before, after, broken, mended


def test_the_list_holds_every_flipped_case_regressions_first(runs: Any) -> None:
    before, after, broken, mended = runs
    w = FlippedCases(after, before)
    listed = [value for _, value in w.picker.options]
    assert set(listed[:5]) == broken and set(listed[5:]) == mended
    assert [label.split(" · ")[0] for label, _ in w.picker.options] == ["pass->fail"] * 5 + ["fail->pass"] * 3
    assert "5 pass→fail" in w.header.value and "3 fail→pass" in w.header.value
    assert w.selected is None and "Pick a case" in w.detail.value


def test_picking_a_case_shows_its_input_both_outputs_and_every_check(runs: Any) -> None:
    before, after, broken, _ = runs
    w = FlippedCases(after, before)
    case_id = w.picker.options[0][1]
    w.picker.value = case_id  # what a click in the list does
    assert w.selected == case_id and w.case is not None
    case = w.case
    assert case.direction == "pass->fail" and case.case_id in broken
    suite_case = next(c for c in after.suite.cases if c.id == case_id)
    assert case.input == suite_case.input
    # both sides, every repeat, read from each run's own rows
    assert [r["repeat"] for r in case.a.repeats] == [0, 1] == [r["repeat"] for r in case.b.repeats]
    assert {r["status"] for r in case.a.repeats} == {"pass"} and {r["status"] for r in case.b.repeats} == {
        "fail"
    }
    a_rows = before.checks().filter(pl.col("case_id") == case_id).sort("repeat", "check_index")
    assert [c["detail"] for r in case.a.repeats for c in r["checks"]] == a_rows.get_column("detail").to_list()
    b_rows = after.checks().filter(pl.col("case_id") == case_id)
    assert json.loads(case.b.repeats[0]["output"]) == EVIL == json.loads(b_rows.get_column("output")[0])
    page = w.detail.value
    assert suite_case.input["body"][:30].replace("'", "&#x27;") in page
    assert json.loads(case.a.repeats[0]["output"]) in page  # the baseline's label
    assert EVIL not in page and "&lt;script&gt;" in page  # an output is shown, never run
    assert (
        b_rows.get_column("detail")[0].replace("'", "&#x27;").replace("<", "&lt;").replace(">", "&gt;")
        in page
    )
    assert before.id in page and after.id in page


def test_select_drives_it_from_code_and_refuses_a_case_that_did_not_flip(runs: Any) -> None:
    before, after, _, mended = runs
    w = FlippedCases(after, before)
    target = sorted(mended)[0]
    w.select(target)
    assert w.picker.value == target and w.case is not None and w.case.direction == "fail->pass"
    assert "fail-&gt;pass" in w.detail.value
    steady = next(c.id for c in after.suite.cases if c.id not in {v for _, v in w.picker.options})
    with pytest.raises(ValueError, match="not a flipped case"):
        w.select(steady)
    assert w.selected == target  # a refused pick changes nothing
    w.select(None)
    assert w.selected is None and w.case is None and "Pick a case" in w.detail.value


def test_against_the_committed_baseline_json_both_sides_show(runs: Any) -> None:
    before, after, broken, _ = runs
    w = FlippedCases(after, TRIAGE / "baseline.json")
    assert broken <= {v for _, v in w.picker.options}
    case_id = sorted(broken)[0]
    w.select(case_id)
    assert w.case is not None and w.case.a.note is None
    # the baseline file keeps the first repeat: its output and checks are what the baseline system gives
    (stored,) = w.case.a.repeats
    first = before.checks().filter(pl.col("case_id") == case_id, pl.col("repeat") == 0)
    assert stored["status"] == "pass" and stored["output"] == first.get_column("output")[0]
    assert [c["detail"] for c in stored["checks"]] == first.get_column("detail").to_list()
    page = w.detail.value
    assert json.loads(stored["output"]) in page and "&lt;script&gt;" in page  # both outputs, side by side
    assert "not outputs or check details" not in page
    assert len(w.case.b.repeats) == 2  # this run's side is whole


def _old_baseline(before: ek.Run, folder: Path) -> Path:
    """A verdicts-only baseline.json of format 1, as an older evalkit wrote it."""
    from evalkit._baseline import accept

    target = accept(before.path, to=folder / "baseline.json", outputs=False).path
    target.write_text(
        # an older evalkit wrote no digest either
        re.sub(
            r'"format_version": \d+',
            '"format_version": 1',
            re.sub(r'  "digest": "[^"]*",\n', "", target.read_text(encoding="utf-8")),
        ),
        encoding="utf-8",
    )
    return target


def test_against_an_old_baseline_json_the_reference_side_says_to_re_save_it(
    runs: Any, tmp_path: Path
) -> None:
    before, after, broken, _ = runs
    w = FlippedCases(after, _old_baseline(before, tmp_path))
    w.select(sorted(broken)[0])
    assert w.case is not None and w.case.a.repeats == [] and w.case.a.note is not None
    assert "format-1 baseline.json" in w.case.a.note and "verdict here: pass" in w.case.a.note
    assert "Re-save the baseline" in w.case.a.note and before.id in w.case.a.note
    assert "not outputs or check details" in w.detail.value
    assert len(w.case.b.repeats) == 2


def test_a_clipped_baseline_output_says_so(tmp_path: Path) -> None:
    suite = ek.load_suite(TRIAGE)
    long_text = "word " * 2000

    def verbose(case_input: Any) -> Any:
        return long_text

    def terse(case_input: Any) -> Any:
        return "billing"

    before = ek.run(suite, verbose, runs_dir=tmp_path, progress=False)
    after = ek.run(suite, terse, runs_dir=tmp_path, progress=False)
    from evalkit._baseline import OUTPUT_CAP, accept

    target = accept(before.path, to=tmp_path / "baseline.json").path
    w = FlippedCases(after, target)
    case_id = w.picker.options[0][1]  # a billing case: it failed before and passes now
    w.picker.value = case_id
    assert w.case is not None and w.case.direction == "fail->pass"
    (stored,) = w.case.a.repeats
    assert len(json.loads(stored["output"])) == OUTPUT_CAP and stored["output_chars"] == len(long_text)
    assert f"clipped in baseline.json: {len(long_text)} characters in all" in w.detail.value


def test_no_flips_says_so(runs: Any) -> None:
    before, _, _, _ = runs
    w = FlippedCases(before, before.path)
    assert w.picker.options == () and "No case changed" in w.detail.value
