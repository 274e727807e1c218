"""The case browser and editor, driven as a person drives them: filters picked, text typed, Save clicked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.suite import load_suite
from evalkit.widgets import CaseBrowser, CaseEditor

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def triage(tmp_path: Path) -> Path:
    dest = tmp_path / "support-triage"
    shutil.copytree(ROOT / "goldens" / "support-triage", dest)
    return dest


def test_browser_filters_as_the_dropdowns_and_text_change(triage: Path) -> None:
    browser = CaseBrowser(load_suite(triage))
    assert len(browser.matches) == 159
    browser.slice.value = "non-english"
    assert len(browser.matches) == 15 and all(c.slice == "non-english" for c in browser.matches)
    browser.split.value = "holdout"
    assert len(browser.matches) == 3
    assert "<b>3</b> of 159" in browser.count.value
    browser.slice.value, browser.split.value = None, None
    browser.text.value = "invoice october"
    assert [c.id for c in browser.matches] == ["tri-001"]
    assert "tri-001" in browser.table.value and "exact = &quot;billing&quot;" in browser.table.value
    browser.text.value = "<script>"
    assert browser.matches == [] and "No case matches" in browser.table.value


def test_edit_a_case_and_save_a_new_version(triage: Path) -> None:
    path = triage / "cases.jsonl"
    before = path.read_text().splitlines()
    editor = CaseEditor(load_suite(triage))
    old_version = editor.suite.version
    editor.picker.value = "tri-004"
    shown = json.loads(editor.text.value)
    assert shown == json.loads(before[3])  # the case as written, in its one-grader form
    assert not editor.save_button.disabled
    editor.text.value = editor.text.value.replace('"billing"', '"account"')
    assert "valid" in editor.status.value and "edits tri-004" in editor.status.value
    editor.save_button.click()
    after = path.read_text().splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [3]
    assert json.loads(after[3]) == {**json.loads(before[3]), "expected": "account"}
    assert list(json.loads(after[3])) == list(json.loads(before[3]))
    new_version = load_suite(triage).version
    assert editor.last is not None and editor.last.new_version == new_version != old_version
    assert old_version in editor.result.value and new_version in editor.result.value
    assert "&quot;expected&quot;: &quot;account&quot;" in editor.result.value  # the diff, escaped
    assert editor.suite.version == new_version and editor.picker.value == "tri-004"


def test_an_invalid_edit_disables_save_and_saves_nothing(triage: Path) -> None:
    path = triage / "cases.jsonl"
    before = path.read_bytes()
    editor = CaseEditor(load_suite(triage))
    editor.picker.value = "tri-010"
    text = editor.text.value
    # each keystroke is a change: half-typed JSON is reported where it breaks, and Save stays off
    editor.text.value = text[: len(text) // 2]
    assert (
        editor.save_button.disabled
        and "invalid JSON" in editor.status.value
        and "line " in editor.status.value
    )
    editor.text.value = text.replace('"grader": "exact"', '"grader": "exactly"')
    assert editor.save_button.disabled
    assert "unknown grader" in editor.status.value and "<code>grader</code>" in editor.status.value
    editor.save_button.click()  # a click that gets through anyway does nothing
    assert editor.save() is None
    editor.text.value = text.replace('"id": "tri-010"', '"id": "tri-011"')
    assert editor.save_button.disabled and "already used" in editor.status.value
    assert path.read_bytes() == before
    assert editor.last is None


def test_a_new_case_is_added_at_the_end_in_the_suites_form(triage: Path) -> None:
    path = triage / "cases.jsonl"
    editor = CaseEditor(load_suite(triage))
    assert editor.picker.value is None  # starts on a new case
    template = json.loads(editor.text.value)
    assert template["id"] == "tri-160" and template["grader"] == "exact"
    case = {
        **template,
        "input": {"subject": "Where is my parcel", "body": "Order A-1 has not arrived.", "channel": "email"},
        "expected": "shipping",
        "slice": "common",
    }
    editor.text.value = json.dumps(case, indent=2)
    assert "new case" in editor.status.value
    result = editor.save()
    assert result is not None and result.version_changed
    lines = path.read_text().splitlines()
    assert len(lines) == 160 and json.loads(lines[-1]) == case
    assert list(json.loads(lines[-1])) == list(case)
    assert editor.picker.value == "tri-160" and "tri-160" in dict(editor.picker.options).values()
    # and the next new case follows on
    editor.picker.value = None
    assert json.loads(editor.text.value)["id"] == "tri-161"


def test_saving_elsewhere_leaves_the_suite_file_alone(triage: Path, tmp_path: Path) -> None:
    before = (triage / "cases.jsonl").read_bytes()
    out = tmp_path / "copy" / "cases.jsonl"
    editor = CaseEditor(load_suite(triage), path=out)
    editor.picker.value = "tri-001"
    editor.text.value = editor.text.value.replace("October", "November")
    editor.save_button.click()
    assert (triage / "cases.jsonl").read_bytes() == before
    assert "November" in out.read_text() and len(out.read_text().splitlines()) == 159
    # a second save goes to the same file, against the version the first one wrote
    editor.text.value = editor.text.value.replace("November", "December")
    editor.save_button.click()
    assert editor.last is not None and "December" in out.read_text()
    assert load_suite(out).version == editor.last.new_version


def test_a_file_changed_behind_the_editor_is_not_overwritten(triage: Path) -> None:
    path = triage / "cases.jsonl"
    editor = CaseEditor(load_suite(triage))
    path.write_text(path.read_text().replace('"expected": "billing"', '"expected": "refund"', 1))
    changed = path.read_bytes()
    editor.picker.value = "tri-002"
    editor.text.value = editor.text.value.replace("Card declined", "Card refused")
    editor.save_button.click()
    assert "Not saved" in editor.status.value and "changed since this suite was loaded" in editor.status.value
    assert path.read_bytes() == changed
