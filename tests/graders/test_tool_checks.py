"""Checks on the tool calls an output records, graded on the transcripts an order-support agent could write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evalkit as ek
from evalkit.cli import main
from evalkit.graders import GradingContext, grade_check
from evalkit.suite import parse_case

LOOKUP = {"name": "lookup_order", "arguments": {"order_id": "A-10442"}, "result": {"total": 80.0}}
REFUND = {"name": "issue_refund", "arguments": {"order_id": "A-10442", "amount": 80.0}, "result": "ok"}


def _grade(check: dict[str, Any], output: Any) -> tuple[bool | None, str]:
    case, problems = parse_case({"id": "c1", "input": "refund my order A-10442", "checks": [check]})
    assert case is not None, problems
    grade = grade_check(case.checks[0], output, case, GradingContext(base_dir=Path(".")))
    return grade.passed, grade.detail


@pytest.mark.parametrize(
    ("check", "calls", "passed", "said"),
    [
        ({"kind": "tool_called", "tool": "lookup_order"}, [LOOKUP], True, "lookup_order("),
        ({"kind": "tool_called", "tool": "issue_refund"}, [LOOKUP], False, "issue_refund was not called (calls: lookup_order)"),
        ({"kind": "tool_called", "tool": "issue_refund", "arguments": {"amount": 80.0}}, [REFUND], True, "called"),
        ({"kind": "tool_called", "tool": "issue_refund", "arguments": {"amount": 800.0}}, [REFUND], False, "amount differ"),
        ({"kind": "tool_called", "tool": "issue_refund", "arguments": {"amount": 80.0}, "match": "exact"}, [REFUND], False, "not exactly"),
        ({"kind": "tool_called", "tool": "issue_refund", "arguments_schema": {"type": "object", "properties": {"amount": {"maximum": 50}}}}, [REFUND], False, "schema"),
        ({"kind": "tool_not_called", "tool": "issue_refund"}, [LOOKUP], True, "was not called"),
        ({"kind": "tool_not_called", "tool": "issue_refund"}, [LOOKUP, REFUND], False, "issue_refund was called: issue_refund("),
        ({"kind": "tool_sequence", "tools": ["lookup_order", "issue_refund"]}, [LOOKUP, {"name": "log"}, REFUND], True, "in order"),
        ({"kind": "tool_sequence", "tools": ["lookup_order", "issue_refund"]}, [REFUND, LOOKUP], False, "not in order"),
        ({"kind": "tool_sequence", "tools": ["lookup_order", "issue_refund"], "strict": True}, [LOOKUP, {"name": "log"}, REFUND], False, "not exactly"),
        ({"kind": "max_tool_calls", "limit": 1}, [LOOKUP, LOOKUP], False, "2 tool calls; at most 1"),
        ({"kind": "max_tool_calls", "limit": 1, "tool": "issue_refund"}, [LOOKUP, LOOKUP, REFUND], True, "1 call to issue_refund"),
    ],
)  # fmt: skip
def test_each_tool_check_on_a_transcript(
    check: dict[str, Any], calls: list[Any], passed: bool, said: str
) -> None:
    for output in ({"tool_calls": calls, "final": "done"}, calls):  # a transcript object, or the list alone
        got, detail = _grade(check, output)
        assert got is passed and said in detail, detail


def test_an_output_without_calls_fails_and_says_how_to_record_them() -> None:
    passed, detail = _grade({"kind": "tool_not_called", "tool": "issue_refund"}, "Sure, refunded!")
    assert passed is False and '{"tool_calls": [{"name"' in detail


def test_a_bad_tool_check_is_located_at_validation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "agent.jsonl"
    bad.write_text(
        json.dumps({"id": "a1", "input": "x", "checks": [{"kind": "tool_sequence", "tools": []}]}) + "\n"
    )
    assert main(["validate", str(bad)]) == 2
    assert f"{bad}:1: checks[0].tools" in capsys.readouterr().err


def test_a_suite_of_an_agent_runs_with_tool_checks(tmp_path: Path) -> None:
    suite = tmp_path / "agent"
    suite.mkdir()
    rows = [
        {"id": "ok-1", "input": {"order": "A-1", "amount": 20}, "slice": "refund", "checks": [
            {"kind": "tool_sequence", "tools": ["lookup_order", "issue_refund"]},
            {"kind": "tool_called", "tool": "issue_refund", "arguments": {"order_id": "A-1"}}]},
        {"id": "big-1", "input": {"order": "A-2", "amount": 900}, "slice": "above-total", "checks": [
            {"kind": "tool_not_called", "tool": "issue_refund"}]},
    ]  # fmt: skip
    (suite / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (suite / "suite.toml").write_text('name = "agent"\n')
    (suite / "baseline.py").write_text(
        "def predict(input):\n"
        "    calls = [{'name': 'lookup_order', 'arguments': {'order_id': input['order']}, 'result': {'total': 100}}]\n"
        "    calls.append({'name': 'issue_refund', 'arguments': {'order_id': input['order'], 'amount': input['amount']}})\n"
        "    return {'tool_calls': calls, 'final': 'Refunded.'}\n"
    )
    run = ek.run(suite, judge="off", runs_dir=tmp_path / "runs", progress=False)
    verdicts = dict(zip(run.verdicts()["case_id"], run.verdicts()["status"], strict=True))
    assert verdicts == {"ok-1": "pass", "big-1": "fail"}  # the agent refunds above the order total
