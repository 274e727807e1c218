"""The editor's (new case): the suite's form with a fresh id, and nothing another case said of itself."""

from __future__ import annotations

from pathlib import Path

from evalkit.suite import load_suite, new_case_template

ROOT = Path(__file__).resolve().parents[2]


def test_a_new_case_copies_the_form_not_the_last_cases_answer_slice_or_source() -> None:
    suite = load_suite(ROOT / "goldens" / "support-triage")
    last = suite.cases[-1]
    template = new_case_template(suite)
    assert template["id"] not in {c.id for c in suite.cases} and template["grader"] == "exact"
    assert template["expected"] == "" and "slice" not in template and "source" not in template
    assert set(template["input"]) == set(last.input) and all(v == "" for v in template["input"].values())
    checks_form = new_case_template(load_suite(ROOT / "goldens" / "reply-drafter"))
    exact = next(c for c in checks_form["checks"] if c["kind"] == "exact")
    assert exact["expected"] == "" and "slice" not in checks_form
