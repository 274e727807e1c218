"""Exact, schema and code graders, and the cheapest-first cascade."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.errors import CacheError, CallError, JudgeError
from evalkit.graders import NOT_JUDGED, Grade, GradingContext, grade_case, grade_check
from evalkit.suite import Case, JudgeCheck, load_user_module, parse_case


def case_with(*checks: dict[str, Any], input: Any = "q") -> Case:
    case, problems = parse_case({"id": "t", "input": input, "checks": list(checks)})
    assert not problems and case is not None, problems
    return case


def grade(check: dict[str, Any], output: Any, input: Any = "q", ctx: GradingContext | None = None) -> Grade:
    case = case_with(check, input=input)
    return grade_check(case.checks[0], output, case, ctx or GradingContext())


# exact ------------------------------------------------------------------------------------------------------


def test_exact_plain_and_normalised() -> None:
    assert grade({"kind": "exact", "expected": "billing"}, "billing").passed
    assert not grade({"kind": "exact", "expected": "billing"}, " Billing\n").passed
    assert grade(
        {"kind": "exact", "expected": "billing", "normalize": ["strip", "casefold"]}, " Billing\n"
    ).passed
    g = grade({"kind": "exact", "expected": 1240, "normalize": ["numbers"]}, "1.240,00")
    assert g.passed, g.detail


def test_exact_object_has_a_verdict_per_field() -> None:
    g = grade(
        {
            "kind": "exact",
            "expected": {"supplier": "ACME GmbH", "total": 100, "currency": "EUR"},
            "normalize": ["numbers", "casefold"],
        },
        {"supplier": "acme gmbh", "total": "100.00", "currency": "USD", "extra": 1},
    )
    assert not g.passed
    assert g.fields == {"supplier": True, "total": True, "currency": False}
    assert g.score == pytest.approx(2 / 3)
    assert "currency: expected 'EUR', got 'USD'" in g.detail


def test_exact_on_a_field_of_a_json_string_output() -> None:
    g = grade(
        {"kind": "exact", "field": "label", "expected": "refund"}, '{"label": "refund", "draft": "..."}'
    )
    assert g.passed
    g = grade({"kind": "exact", "field": "label", "expected": "refund"}, {"draft": "..."})
    assert not g.passed and "no field 'label'" in g.detail


def test_exact_nested_path_and_null() -> None:
    out = {"line_items": [{"amount": 5}], "date": None}
    assert grade({"kind": "exact", "field": "line_items.0.amount", "expected": 5}, out).passed
    assert grade({"kind": "exact", "field": "date", "expected": None}, out).passed
    assert not grade({"kind": "exact", "field": "date", "expected": "2026-01-01"}, out).passed


# schema -----------------------------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "required": ["total", "currency"],
    "properties": {"total": {"type": "number"}, "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}},
}


def test_schema_from_case_and_from_suite() -> None:
    assert grade({"kind": "schema", "schema": SCHEMA}, {"total": 3.5, "currency": "EUR"}).passed
    g = grade({"kind": "schema", "schema": SCHEMA}, {"total": "3.5", "currency": "euro"})
    assert not g.passed and "2 schema error(s)" in g.detail and "total" in g.detail
    ctx = GradingContext(output_schema=SCHEMA)
    assert not grade({"kind": "schema"}, '{"total": 1}', ctx=ctx).passed
    assert grade({"kind": "schema"}, '{"total": 1, "currency": "GBP"}', ctx=ctx).passed


def test_schema_from_a_pydantic_model_in_the_suite(tmp_path: Path) -> None:
    mod = tmp_path / "checks.py"
    mod.write_text(
        "from pydantic import BaseModel\n\nclass Invoice(BaseModel):\n    total: float\n    currency: str\n"
    )
    ctx = GradingContext(user=load_user_module(mod))
    assert grade({"kind": "schema", "model": "Invoice"}, {"total": 1, "currency": "EUR"}, ctx=ctx).passed
    assert not grade({"kind": "schema", "model": "Invoice"}, {"total": "lots"}, ctx=ctx).passed


# code -------------------------------------------------------------------------------------------------------


def test_contains_all_names_missing_facts_and_accepts_alternatives() -> None:
    check = {"kind": "contains_all", "facts": ["14 days", ["receipt", "proof of purchase"], "Store credit"]}
    g = grade(check, "Returns within 14 DAYS with proof of purchase.")
    assert not g.passed and g.detail == "missing: 'Store credit'"
    assert g.score == pytest.approx(2 / 3)
    assert grade(check, "14  days, a receipt, and store credit").passed


def test_contains_none_and_regex() -> None:
    assert not grade(
        {"kind": "contains_none", "phrases": ["full refund"]}, "We'll give you a FULL refund"
    ).passed
    assert grade({"kind": "contains_none", "phrases": ["full refund"]}, "A partial refund").passed
    assert grade({"kind": "regex", "pattern": r"A-\d{5}"}, "order A-10442").passed
    assert not grade(
        {"kind": "regex", "pattern": "sorry", "flags": "i", "must_match": False}, "Sorry!"
    ).passed


def test_word_limits() -> None:
    text = "one two three four five"
    assert grade({"kind": "max_words", "limit": 5}, text).passed
    g = grade({"kind": "max_words", "limit": 4}, text)
    assert not g.passed and g.detail == "5 words; at most 4 allowed"
    assert grade({"kind": "min_words", "limit": 5}, text).passed
    assert not grade({"kind": "min_words", "limit": 6}, text).passed


def test_json_valid() -> None:
    assert grade({"kind": "json_valid"}, '{"a": 1}').passed
    assert not grade({"kind": "json_valid"}, "{a: 1}").passed
    assert grade({"kind": "json_valid"}, {"a": 1}).passed


INVOICE = {
    "line_items": [
        {"description": "Widget", "quantity": 3, "unit_price": "19.99", "amount": 59.97},
        {"description": "Setup", "quantity": 1, "unit_price": 40, "amount": 40},
    ],
    "discount": 10,
    "tax": "17.99",
    "total": "107.96",
}


def test_sums_pass_and_each_kind_of_failure() -> None:
    check = {"kind": "sums", "add": ["tax"], "subtract": ["discount"]}
    assert grade(check, INVOICE).passed
    bad_line = {
        **INVOICE,
        "line_items": [{**INVOICE["line_items"][0], "amount": 60.97}, INVOICE["line_items"][1]],
    }
    g = grade(check, bad_line)
    assert not g.passed and "item 0: 3 x 19.99 = 59.97, but amount is 60.97" in g.detail
    g = grade(check, {**INVOICE, "total": 117.96})
    assert not g.passed and "items + tax - discount = 107.96, but total is 117.96" in g.detail
    assert grade({**check, "tolerance": 0.5}, {**INVOICE, "total": 108.2}).passed
    assert grade(check, {"line_items": [], "total": None}).passed
    assert not grade(check, {"line_items": INVOICE["line_items"], "total": None}).passed


def test_citations_subset() -> None:
    inp = {"question": "q", "chunks": [{"id": "refund-02", "text": "..."}, {"id": "ship-01", "text": "..."}]}
    check = {"kind": "citations_subset", "require_citation": True}
    assert grade(check, "Refunds take 14 days [refund-02].", input=inp).passed
    g = grade(check, "Refunds take 14 days [refund-09][ship-01].", input=inp)
    assert not g.passed and "refund-09" in g.detail and g.score == 0.5
    assert not grade(check, "Refunds take 14 days.", input=inp).passed
    assert grade({"kind": "citations_subset"}, "I don't know.", input=inp).passed
    assert grade({"kind": "citations_subset", "retrieved": ["a"]}, ["a"]).passed


def test_no_email_except() -> None:
    check = {"kind": "no_email_except", "allowed": ["Jo@Example.com"]}
    assert grade(check, "Reply to jo@example.com.").passed
    g = grade(check, "cc: other.customer@example.org and jo@example.com")
    assert not g.passed and "other.customer@example.org" in g.detail


def test_sql_rows_match(tmp_path: Path) -> None:
    db = tmp_path / "shop.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript(
        "create table orders(id int, customer text, total real);"
        "insert into orders values (1,'ana',10),(2,'bo',25),(3,'ana',5);"
    )
    conn.commit()
    conn.close()
    ctx = GradingContext(base_dir=tmp_path)
    check = {
        "kind": "sql_rows_match",
        "fixture": "shop.sqlite",
        "reference_sql": "select customer, sum(total) from orders group by customer",
    }
    assert grade(
        check, "```sql\nSELECT customer, SUM(total) FROM orders GROUP BY 1 ORDER BY 1 DESC;\n```", ctx=ctx
    ).passed
    assert not grade(
        {**check, "ordered": True},
        "select customer, sum(total) from orders group by 1 order by 1 desc",
        ctx=ctx,
    ).passed
    g = grade(check, "select customer from orders", ctx=ctx)
    assert not g.passed and "3 rows" in g.detail
    assert "failed" in grade(check, "select nope from orders", ctx=ctx).detail
    assert "not a SELECT" in grade(check, "drop table orders", ctx=ctx).detail
    script = tmp_path / "shop.sql"
    script.write_text("create table t(x int); insert into t values (1),(2);")
    assert grade(
        {"kind": "sql_rows_match", "fixture": "shop.sql", "reference_sql": "select x from t"},
        "select x from t order by x desc",
        ctx=GradingContext(base_dir=tmp_path),
    ).passed


def test_user_checks_registered_in_a_suite_file(tmp_path: Path) -> None:
    mod = tmp_path / "checks.py"
    mod.write_text(
        "import evalkit\n"
        "@evalkit.check('under_total')\n"
        "def under_total(value, case, cap_key='total'):\n"
        "    ok = float(value) <= case.input[cap_key]\n"
        "    return ok, f'{value} vs {case.input[cap_key]}'\n"
        "@evalkit.check('boom')\n"
        "def boom(value, case):\n"
        "    raise RuntimeError('broken invariant code')\n"
    )
    ctx = GradingContext(user=load_user_module(mod))
    g = grade({"kind": "user", "name": "under_total"}, "12", input={"total": 10}, ctx=ctx)
    assert not g.passed and g.detail == "12 vs 10"
    assert grade({"kind": "user", "name": "under_total"}, "9", input={"total": 10}, ctx=ctx).passed
    case = case_with({"kind": "user", "name": "boom"})
    (outcome,) = grade_case(case, "x", ctx)
    assert outcome.status == "error" and "broken invariant code" in (outcome.error or "")
    assert outcome.error_kind == "check_exception"


def test_global_user_check_from_a_notebook() -> None:
    @evalkit.check("starts_polite_test")
    def polite(value: Any, case: Case) -> bool:
        return str(value).startswith("Hi")

    assert grade({"kind": "user", "name": "starts_polite_test"}, "Hi there").passed


# cascade ----------------------------------------------------------------------------------------------------


def test_judge_skipped_when_a_cheaper_check_on_its_field_failed() -> None:
    case = case_with(
        {"kind": "judge", "field": "draft", "rubric": ["Answers the question"]},
        {"kind": "exact", "field": "label", "expected": "refund"},
        {"kind": "max_words", "field": "draft", "limit": 3},
    )
    calls: list[str] = []

    def judge(check: JudgeCheck, value: Any, case: Case) -> Grade:
        calls.append(value)
        return Grade(passed=True, detail="ok")

    long_draft = {"label": "refund", "draft": "far too many words here"}
    outcomes = grade_case(case, long_draft, GradingContext(), judge=judge)
    assert [o.status for o in outcomes] == ["skipped", "pass", "fail"]
    assert outcomes[0].skipped_reason == "cheaper check failed: max_words:draft"
    assert calls == []
    # a failure on another field does not block the judge, unless the suite asks for that
    wrong_label = {"label": "billing", "draft": "short and fine"}
    outcomes = grade_case(case, wrong_label, GradingContext(), judge=judge)
    assert [o.status for o in outcomes] == ["pass", "fail", "pass"]
    outcomes = grade_case(case, wrong_label, GradingContext(), judge=judge, skip_judge_when="any_failed")
    assert outcomes[0].status == "skipped"
    assert calls == ["short and fine"]


@pytest.mark.parametrize(
    ("raised", "kind"),
    [
        (JudgeError("the judge gave no valid verdict"), "judge_error"),
        (KeyError("a bug in a judge"), "judge_error"),
        (CallError("overloaded", 529, "busy"), "overloaded"),
        (CacheError("Cannot write to the response cache directory"), "cache_write"),
    ],
)
def test_a_judge_error_has_its_kind(raised: Exception, kind: str) -> None:
    case = case_with({"kind": "judge", "rubric": ["x"]})

    def judge(check: JudgeCheck, value: Any, case: Case) -> Grade:
        raise raised

    (outcome,) = grade_case(case, "a", GradingContext(), judge=judge)
    assert outcome.status == "error" and outcome.error_kind == kind
    assert (outcome.error or "").startswith(type(raised).__name__ + ": ")


def test_judge_not_judged_without_a_judge() -> None:
    case = case_with({"kind": "judge", "rubric": ["x"]}, {"kind": "contains_all", "facts": ["a"]})
    outcomes = grade_case(case, "a", GradingContext())
    assert outcomes[0].status == "not_judged" and outcomes[0].skipped_reason == NOT_JUDGED
    assert outcomes[0].passed is None and outcomes[1].passed is True


def test_judge_skipped_when_a_cheaper_check_on_its_field_errored(tmp_path: Path) -> None:
    mod = tmp_path / "checks.py"
    mod.write_text(
        "import evalkit\n@evalkit.check('boom2')\ndef boom(value, case):\n    raise RuntimeError('bug')\n"
    )
    ctx = GradingContext(user=load_user_module(mod))
    case = case_with(
        {"kind": "user", "name": "boom2", "field": "draft"},
        {"kind": "judge", "field": "draft", "rubric": ["Answers the question"]},
    )
    calls: list[Any] = []

    def judge(check: JudgeCheck, value: Any, case: Case) -> Grade:
        calls.append(value)
        return Grade(passed=True)

    outcomes = grade_case(case, {"draft": "fine"}, ctx, judge=judge)
    assert [o.status for o in outcomes] == ["error", "skipped"]
    assert (outcomes[1].skipped_reason or "").startswith("cheaper check errored: ")
    assert calls == []  # the case is an error whatever the judge says: no call is paid for
