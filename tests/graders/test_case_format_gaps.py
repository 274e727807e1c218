"""any_of on exact, lists read from the case's input, must_not_cite, and amounts included in sums."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main
from evalkit.graders import Grade, GradingContext, grade_case, grade_check
from evalkit.suite import Case, load_suite, parse_case, validate_suite

DOCS = Path(__file__).resolve().parents[2] / "docs" / "case-format.md"
GOLDENS = Path(__file__).resolve().parents[2] / "goldens"


def case_with(*checks: dict[str, Any], input: Any = "q") -> Case:
    case, problems = parse_case({"id": "t", "input": input, "checks": list(checks)})
    assert not problems and case is not None, problems
    return case


def grade(check: dict[str, Any], output: Any, input: Any = "q") -> Grade:
    case = case_with(check, input=input)
    return grade_check(case.checks[0], output, case, GradingContext())


def problems_of(check: dict[str, Any], input: Any = "q") -> list[tuple[str, str]]:
    _, problems = parse_case({"id": "t", "input": input, "checks": [check]})
    return [(p.field, p.message) for p in problems]


# exact any_of -------------------------------------------------------------------------------------------------


def test_any_of_passes_on_any_alternative_after_normalising() -> None:
    check = {"kind": "exact", "any_of": ["refund", "billing"], "normalize": ["strip", "casefold"]}
    assert grade(check, " Billing\n").passed
    assert grade(check, "REFUND").passed
    g = grade(check, "shipping")
    assert (
        not g.passed and g.score == 0.0 and g.detail == "expected one of 'refund', 'billing'; got 'shipping'"
    )
    assert grade({"kind": "exact", "any_of": [1240], "normalize": ["numbers"]}, "1.240,00").passed


def test_any_of_objects_give_the_closest_alternatives_verdicts() -> None:
    check = {
        "kind": "exact",
        "any_of": [{"currency": "EUR", "total": 100}, {"currency": "USD", "total": 108, "fx": True}],
        "normalize": ["numbers"],
    }
    assert grade(check, {"currency": "USD", "total": "108.00", "fx": True}).detail.startswith(
        "matches accepted output 2 of 2"
    )
    g = grade(check, {"currency": "EUR", "total": 99})
    assert not g.passed and g.fields == {"currency": True, "total": False} and g.score == 0.5
    assert "closest (1): total: expected 100, got 99" in g.detail


@pytest.mark.parametrize(
    ("check", "said"),
    [
        ({"kind": "exact"}, "expected is missing: give expected, or any_of"),
        ({"kind": "exact", "expected": "a", "any_of": ["a"]}, "give expected or any_of, not both"),
        ({"kind": "exact", "any_of": []}, "at least 1 item"),
    ],
)
def test_any_of_problems(check: dict[str, Any], said: str) -> None:
    ((_, message),) = problems_of(check)
    assert said in message


def test_an_expected_null_survives_a_save(tmp_path: Path) -> None:
    case = case_with({"kind": "exact", "field": "discount", "expected": None})
    again, problems = parse_case(case.to_record())
    assert not problems and again == case
    assert grade({"kind": "exact", "field": "discount", "expected": None}, {"discount": None}).passed


# facts_from, retrieved_from, allowed_from ---------------------------------------------------------------------

POLICY = {
    "question": "Can I return it?",
    "policy_facts": ["30 days", ["receipt", "proof of purchase"]],
    "retrieved_ids": ["P-1", "P-4"],
    "chunks": [{"id": "c1", "text": "..."}, {"id": "c2", "text": "..."}],
    "contact": {"emails": ["help@shop.example"]},
}


def test_facts_from_reads_the_facts_from_the_input() -> None:
    check = {"kind": "contains_all", "facts_from": "input.policy_facts"}
    assert grade(check, "Within 30 days, with proof of purchase.", input=POLICY).passed
    g = grade(check, "Within 30 days.", input=POLICY)
    assert not g.passed and g.score == 0.5 and "'receipt | proof of purchase'" in g.detail


def test_retrieved_from_takes_an_input_path_and_must_not_cite_bars_ids() -> None:
    check = {"kind": "citations_subset", "retrieved_from": "input.retrieved_ids"}
    assert grade(check, "See [P-1] and [P-4].", input=POLICY).passed
    g = grade(check, "See [P-2].", input=POLICY)
    assert not g.passed and "cites ids not retrieved: P-2 (retrieved: P-1, P-4)" in g.detail
    # the default path, read inside the input as before
    assert grade({"kind": "citations_subset"}, "See [c2].", input=POLICY).passed
    barred = {**check, "must_not_cite": ["P-4"]}
    g = grade(barred, "See [P-1] and [P-4].", input=POLICY)
    assert not g.passed and g.score == 0.5 and g.detail == "cites ids it must not: P-4"
    assert grade(barred, "See [P-1].", input=POLICY).passed
    g = grade({**barred, "retrieved": ["P-1"]}, "[P-4] [P-9] [P-1]", input=POLICY)
    assert g.detail == "cites ids it must not: P-4; cites ids not retrieved: P-9 (retrieved: P-1)"
    assert g.score == pytest.approx(1 / 3)
    assert grade(barred, ["P-1", "P-4"], input=POLICY).detail == "cites ids it must not: P-4"


def test_allowed_from_adds_the_inputs_addresses() -> None:
    check = {"kind": "no_email_except", "allowed": ["a@x.example"], "allowed_from": "input.contact.emails"}
    assert grade(check, "Write to help@shop.example or a@x.example.", input=POLICY).passed
    g = grade(check, "Write to sales@shop.example.", input=POLICY)
    assert not g.passed and "sales@shop.example" in g.detail


@pytest.mark.parametrize(
    ("check", "field", "said"),
    [
        (
            {"kind": "contains_all", "facts_from": "input.nope"},
            "checks[0].facts_from",
            "the case's input has nothing at 'input.nope', where the facts should be",
        ),
        (
            {"kind": "contains_all", "facts_from": "input.question"},
            "checks[0].facts_from",
            "'input.question' in the case's input is a str, not a list of facts",
        ),
        (
            {"kind": "contains_all", "facts_from": "input.chunks"},
            "checks[0].facts_from",
            "fact 0 is a dict",
        ),
        (
            {"kind": "citations_subset", "retrieved_from": "input.retrieved"},
            "checks[0].retrieved_from",
            "the case's input has nothing at 'input.retrieved'",
        ),
        (
            {"kind": "citations_subset", "retrieved_from": "input.policy_facts"},
            "checks[0].retrieved_from",
            "input.policy_facts[1] is neither an id nor an object with an 'id'",
        ),
        (
            {"kind": "no_email_except", "allowed_from": "input.chunks"},
            "checks[0].allowed_from",
            "input.chunks[0] is not an email address",
        ),
    ],
)
def test_a_path_that_does_not_fit_the_input_is_a_located_problem(
    tmp_path: Path, check: dict[str, Any], field: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cases.jsonl"
    ok = {"id": "ok", "input": "q", "checks": [{"kind": "json_valid"}]}
    bad = {"id": "bad", "input": POLICY, "checks": [check]}
    path.write_text(json.dumps(ok) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    _, problems = validate_suite(path)
    (problem,) = problems
    assert (problem.line, problem.field) == (2, field) and said in problem.message and problem.hint
    assert main(["validate", str(path)]) == 2
    shown = capsys.readouterr()
    assert f"{path}:2" in shown.out + shown.err


def test_a_path_that_names_nothing_is_an_error_when_graded_anyway() -> None:
    case = case_with({"kind": "contains_all", "facts_from": "input.nope"}, input=POLICY)
    (outcome,) = grade_case(case, "text", GradingContext())
    assert outcome.status == "error" and "nothing at 'input.nope'" in (outcome.error or "")


@pytest.mark.parametrize(
    ("check", "said"),
    [
        ({"kind": "contains_all"}, "give facts (a list) or facts_from"),
        ({"kind": "contains_all", "facts": ["a"], "facts_from": "input.policy_facts"}, "not both"),
        ({"kind": "contains_all", "facts_from": "policy_facts"}, "start it with 'input.'"),
        ({"kind": "no_email_except", "allowed_from": "input."}, "start it with 'input.'"),
        ({"kind": "citations_subset", "retrieved_from": "input..chunks"}, "a path into the case's input"),
    ],
)
def test_from_key_shape_problems(check: dict[str, Any], said: str) -> None:
    ((_, message),) = problems_of(check, input=POLICY)
    assert said in message


# sums ---------------------------------------------------------------------------------------------------------


def invoice(**extra: Any) -> dict[str, Any]:
    items = [
        {"quantity": 2, "unit_price": "59.50", "amount": "119.00"},
        {"quantity": 1, "unit_price": "119.00", "amount": "119.00"},
    ]
    return {"line_items": items, **extra}


def test_vat_included_in_the_prices_is_not_added_again() -> None:
    check = {"kind": "sums", "included": ["vat"]}
    assert grade(check, invoice(vat="38.00", total="238.00")).passed
    g = grade({"kind": "sums", "add": ["vat"]}, invoice(vat="38.00", total="238.00"))
    assert not g.passed  # what the case writer had to live with before: VAT counted twice
    g = grade(check, invoice(vat="380.00", total="238.00"))
    assert not g.passed and "vat (380.00) is included in total, but is larger than it (238.00)" in g.detail
    assert "not a number" in grade(check, invoice(vat="n/a", total="238.00")).detail
    assert grade(check, invoice(total="238.00")).passed  # no VAT given: nothing to check


def test_withholding_tax_is_subtracted_whatever_its_sign() -> None:
    check = {"kind": "sums", "add": ["vat"], "subtract": ["withholding_tax"]}
    assert grade(check, invoice(vat="45.22", withholding_tax="-35.70", total="247.52")).passed
    assert grade(check, invoice(vat="45.22", withholding_tax="35.70", total="247.52")).passed
    g = grade(check, invoice(vat="45.22", withholding_tax="35.70", total="283.22"))
    assert not g.passed and "items + vat - withholding_tax = 247.52" in g.detail


def test_an_amount_counts_one_way_only() -> None:
    ((_, message),) = problems_of({"kind": "sums", "subtract": ["vat"], "included": ["vat"]})
    assert message == "'vat' is in both subtract and included: an amount counts one way"


# versions and docs --------------------------------------------------------------------------------------------


def test_new_keys_leave_the_shipped_suites_versions_as_they_were() -> None:
    # the versions in goldens/*/baseline.json were taken before any_of, facts_from, must_not_cite, ... existed
    for folder in sorted(p for p in GOLDENS.iterdir() if (p / "baseline.json").exists()):
        recorded = json.loads((folder / "baseline.json").read_text(encoding="utf-8"))
        assert load_suite(folder).version == recorded["suite_version"], folder.name


def test_the_docs_examples_are_valid_checks() -> None:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("### Accepted alternatives")
    blocks = re.findall(r"```json\n(.*?)```", text[start : text.index("## suite.toml")], flags=re.DOTALL)
    found = 0
    for block in blocks:
        for line in filter(None, (b.strip() for b in _split_objects(block))):
            obj = json.loads(line)
            record = obj if "id" in obj else {"id": "doc", "input": POLICY, "checks": [obj]}
            case, problems = parse_case(record)
            assert not problems and case is not None, (line, problems)
            found += len(case.checks)
    assert found >= 5


def _split_objects(block: str) -> list[str]:
    """The JSON objects of a docs block: one per line, or one spread over several lines."""
    try:
        json.loads(block)
    except json.JSONDecodeError:
        return block.splitlines()
    return [block.replace("\n", " ")]
