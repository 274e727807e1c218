"""Saving a new version: every case keeps its written form, the version follows the content, invalid saves nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.errors import SuiteValidationError
from evalkit.suite import (
    Case,
    check_case_text,
    load_suite,
    new_case_template,
    next_case_id,
    parse_case,
    save_new_version,
    with_case,
    written_form,
)

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "goldens"


@pytest.fixture
def triage(tmp_path: Path) -> Path:
    dest = tmp_path / "support-triage"
    shutil.copytree(GOLDENS / "support-triage", dest)
    return dest


@pytest.mark.parametrize(
    "name", ["support-triage", "invoice-extraction", "refund-policy-qa", "reply-drafter"]
)
def test_save_writes_every_shipped_suite_back_byte_for_byte(tmp_path: Path, name: str) -> None:
    dest = tmp_path / name
    shutil.copytree(GOLDENS / name, dest)
    before = (dest / "cases.jsonl").read_bytes()
    suite = load_suite(dest)
    suite.save()
    assert (dest / "cases.jsonl").read_bytes() == before


def test_hand_written_lines_keep_their_spacing_escapes_and_key_order(tmp_path: Path) -> None:
    lines = [
        '{"input":{"q":"caf\\u00e9"},   "id":"b1","expected":"x","grader":"exact"}',
        '{"id": "b2", "category": "s", "input": "two", "must_contain": ["t"]}',
        '{"id":"b3","input":"three","checks":[{"kind":"max_words","limit":3}],"slice":"z"}',
    ]
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n\n")  # a trailing blank line is not a case
    suite = load_suite(path)
    suite.save()
    assert path.read_text() == "\n".join(lines) + "\n"


def test_an_edited_case_is_written_in_the_form_it_was_given(triage: Path) -> None:
    suite = load_suite(triage)
    old_lines = (triage / "cases.jsonl").read_text().splitlines()
    obj = json.loads(old_lines[3])
    assert list(obj)[:4] == ["id", "input", "expected", "grader"]
    edited = {**obj, "expected": "account"}
    case, problems = parse_case(edited)
    assert case is not None and not problems
    result = save_new_version(suite, with_case(suite, case))
    new_lines = (triage / "cases.jsonl").read_text().splitlines()
    assert len(new_lines) == len(old_lines)
    assert [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b] == [3]
    assert json.loads(new_lines[3]) == edited
    assert list(json.loads(new_lines[3])) == list(obj)  # key order as given: still the one-grader form
    assert result.old_version == suite.version != result.new_version
    assert result.new_version == load_suite(triage).version
    assert result.diff.count("\n-{") == 1 and result.diff.count("\n+{") == 1
    assert '"expected": "billing"' in result.diff and '"expected": "account"' in result.diff
    assert f"@ {suite.version}" in result.diff and f"@ {result.new_version}" in result.diff
    assert result.suite.version == result.new_version
    assert str(result).endswith("lines +1 -1")


def test_a_case_made_in_code_is_written_in_the_checks_form(triage: Path) -> None:
    suite = load_suite(triage)
    made = suite.case("tri-002").model_copy(update={"id": "tri-999"})
    assert written_form(made) is None  # a copy is not the object it came from
    result = save_new_version(suite, [*suite.cases, made])
    last = json.loads((triage / "cases.jsonl").read_text().splitlines()[-1])
    assert last["id"] == "tri-999" and "checks" in last and "grader" not in last
    assert result.new_version != result.old_version


def test_a_mutated_source_object_is_not_written_in_place_of_its_case() -> None:
    obj = {"id": "m1", "input": "x", "expected": "a", "grader": "exact"}
    case, _ = parse_case(obj)
    assert case is not None
    obj["expected"] = "changed after parsing"
    from evalkit.suite import case_line

    assert json.loads(case_line(case))["checks"][0]["expected"] == "a"


def test_notes_only_change_keeps_the_version_but_is_written(triage: Path) -> None:
    suite = load_suite(triage)
    obj = {**json.loads((triage / "cases.jsonl").read_text().splitlines()[0]), "notes": "checked again"}
    result = save_new_version(suite, with_case(suite, parse_case(obj)[0]))  # type: ignore[arg-type]
    assert not result.version_changed
    assert "checked again" in (triage / "cases.jsonl").read_text()
    assert "+{" in result.diff


def test_an_invalid_case_saves_nothing_and_says_where(triage: Path) -> None:
    suite = load_suite(triage)
    before = (triage / "cases.jsonl").read_bytes()
    bad = {"id": "tri-160", "input": "x", "expected": "a", "grader": "exactly"}
    dup = {"id": "tri-001", "input": "y", "expected": "b", "grader": "exact"}
    with pytest.raises(SuiteValidationError) as err:
        save_new_version(suite, [*suite.cases, bad, dup])
    where = [(p.line, p.field) for p in err.value.problems]
    assert (160, "grader") in where
    assert (161, "id") in where and "first used on line 1" in str(err.value)
    assert all(p.path == str(triage / "cases.jsonl") for p in err.value.problems)
    assert (triage / "cases.jsonl").read_bytes() == before
    assert [p.name for p in triage.iterdir() if p.name.endswith(".tmp")] == []


def test_a_file_changed_since_loading_is_not_overwritten(triage: Path) -> None:
    suite = load_suite(triage)
    text = (triage / "cases.jsonl").read_text()
    (triage / "cases.jsonl").write_text(text.replace('"expected": "billing"', '"expected": "refund"', 1))
    with pytest.raises(SuiteValidationError, match="changed since this suite was loaded"):
        save_new_version(suite, suite.cases)


def test_saving_to_another_path_leaves_the_suite_alone(triage: Path, tmp_path: Path) -> None:
    suite = load_suite(triage)
    before = (triage / "cases.jsonl").read_bytes()
    out = tmp_path / "elsewhere" / "cases.jsonl"
    result = save_new_version(suite, suite.cases[:3], path=out)
    assert (triage / "cases.jsonl").read_bytes() == before
    assert out.read_bytes() == b"".join(before.splitlines(keepends=True)[:3])
    assert result.diff.startswith("--- cases.jsonl @") and result.diff.count("\n+{") == 3


def test_a_user_check_that_is_not_registered_is_refused(tmp_path: Path) -> None:
    dest = tmp_path / "reply-drafter"
    shutil.copytree(GOLDENS / "reply-drafter", dest)
    suite = load_suite(dest)
    obj = json.loads((dest / "cases.jsonl").read_text().splitlines()[0])
    obj["checks"][4]["name"] = "no_such_check"
    with pytest.raises(SuiteValidationError, match="no_such_check"):
        save_new_version(suite, [obj, *suite.cases[1:]])
    case, problems = check_case_text(json.dumps(obj), suite, replacing=obj["id"])
    assert case is None and problems[0].field == "checks[4].name"


def test_check_case_text_locates_json_errors_by_line_and_refuses_a_taken_id(triage: Path) -> None:
    suite = load_suite(triage)
    text = '{\n  "id": "tri-160",\n  "input": "x"\n  "expected": "a"\n}'
    case, problems = check_case_text(text, suite)
    assert case is None and problems[0].line == 4 and "line 4 column 3" in problems[0].message
    case, problems = check_case_text('{"id": "tri-002", "input": "x", "expected_exact": "a"}', suite)
    assert case is None and problems[0].field == "id" and "already used" in problems[0].message
    case, problems = check_case_text(
        '{"id": "tri-002", "input": "x", "expected_exact": "a"}', suite, replacing="tri-002"
    )
    assert isinstance(case, Case) and not problems
    case, problems = check_case_text(
        '{"id": "n", "input": "x", "expected_exact": "a", "expected_exat": 1}', suite
    )
    assert case is None and problems[0].hint == "did you mean 'expected_exact'?"
    _, problems = check_case_text('{"id": "n", "id": "m", "input": 1, "expected_exact": 2}', suite)
    assert "appears twice" in problems[0].message


def test_new_case_template_follows_the_suite(triage: Path) -> None:
    suite = load_suite(triage)
    assert next_case_id(suite) == "tri-160"
    template = new_case_template(suite)
    assert template["id"] == "tri-160" and template["grader"] == "exact"
    assert set(template["input"]) == {"subject", "body", "channel"}
    assert all(v == "" for v in template["input"].values())
    case, problems = check_case_text(json.dumps(template), suite)
    assert case is not None, problems
