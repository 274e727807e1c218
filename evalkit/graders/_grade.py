"""Graders, cheapest first: exact/schema, then code checks, then the model judge.

`grade_case` runs a case's checks in that order; a judge check is skipped (and says why) when a cheaper check
on the same field failed (or errored), so a wrong answer never pays for a judge call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from evalkit.graders import _code as code
from evalkit.graders import _exact as exact
from evalkit.graders._base import Grade, GradingContext, get_field
from evalkit.suite import (
    Case,
    CitationsSubsetCheck,
    ContainsAllCheck,
    ContainsNoneCheck,
    ExactCheck,
    JsonValidCheck,
    JudgeCheck,
    MaxWordsCheck,
    MinWordsCheck,
    NoEmailExceptCheck,
    RegexCheck,
    SchemaCheck,
    SqlRowsMatchCheck,
    SumsCheck,
    UserCheck,
    covers,
)

Status = Literal["pass", "fail", "skipped", "error"]
JudgeFn = Callable[[JudgeCheck, Any, Case], Grade]

NOT_JUDGED = "not judged: no judge available (set ANTHROPIC_API_KEY, or pass a judge, to run judge checks)"


@dataclass
class CheckOutcome:
    """One check's result within a case: its verdict, or why it was skipped, or the error that stopped it."""

    index: int
    check: Any
    status: Status
    grade: Grade | None = None
    skipped_reason: str | None = None
    error: str | None = None

    @property
    def passed(self) -> bool | None:
        return self.grade.passed if self.status in ("pass", "fail") and self.grade else None


def grade_check(check: Any, output: Any, case: Case, ctx: GradingContext) -> Grade:
    """Grade one non-judge check against an output."""
    value = get_field(output, check.field)
    if isinstance(check, ExactCheck):
        return exact.grade_exact(check, value)
    if isinstance(check, SchemaCheck):
        return exact.grade_schema(check, value, ctx)
    if isinstance(check, ContainsAllCheck):
        return code.grade_contains_all(check, value)
    if isinstance(check, ContainsNoneCheck):
        return code.grade_contains_none(check, value)
    if isinstance(check, RegexCheck):
        return code.grade_regex(check, value)
    if isinstance(check, MaxWordsCheck | MinWordsCheck):
        return code.grade_words(check, value)
    if isinstance(check, JsonValidCheck):
        return code.grade_json_valid(check, value)
    if isinstance(check, SumsCheck):
        return code.grade_sums(check, value)
    if isinstance(check, CitationsSubsetCheck):
        return code.grade_citations_subset(check, value, case.input)
    if isinstance(check, NoEmailExceptCheck):
        return code.grade_no_email_except(check, value)
    if isinstance(check, SqlRowsMatchCheck):
        return code.grade_sql_rows_match(check, value, ctx.base_dir)
    if isinstance(check, UserCheck):
        return code.grade_user(check, value, case, ctx)
    raise TypeError(f"no grader for check kind {getattr(check, 'kind', type(check).__name__)!r}")


def grade_case(
    case: Case,
    output: Any,
    ctx: GradingContext,
    judge: JudgeFn | None = None,
    skip_judge_when: Literal["same_field", "any_failed"] = "same_field",
) -> list[CheckOutcome]:
    """Run a case's checks cheapest first; results come back in the case's own check order."""
    order = sorted(range(len(case.checks)), key=lambda i: (case.checks[i].order, i))
    outcomes: dict[int, CheckOutcome] = {}
    failed: list[Any] = []
    errored: set[int] = set()
    for i in order:
        chk = case.checks[i]
        if isinstance(chk, JudgeCheck):
            blockers = [f for f in failed if skip_judge_when == "any_failed" or covers(f.field, chk.field)]
            if blockers:
                names = ", ".join(b.label for b in blockers)
                how = "errored" if all(id(b) in errored for b in blockers) else "failed"
                outcomes[i] = CheckOutcome(i, chk, "skipped", skipped_reason=f"cheaper check {how}: {names}")
                continue
            if judge is None:
                outcomes[i] = CheckOutcome(i, chk, "skipped", skipped_reason=NOT_JUDGED)
                continue
        try:
            if isinstance(chk, JudgeCheck):
                assert judge is not None
                grade = judge(chk, get_field(output, chk.field), case)
            else:
                grade = grade_check(chk, output, case, ctx)
        except Exception as exc:
            outcomes[i] = CheckOutcome(i, chk, "error", error=f"{type(exc).__name__}: {exc}")
            failed.append(
                chk
            )  # the case ends in an error whatever a judge says: no judge call is paid for it
            errored.add(id(chk))
            continue
        outcomes[i] = CheckOutcome(i, chk, "pass" if grade.passed else "fail", grade=grade)
        if not grade.passed:
            failed.append(chk)
    return [outcomes[i] for i in range(len(case.checks))]


__all__ = ["NOT_JUDGED", "CheckOutcome", "Grade", "GradingContext", "JudgeFn", "grade_case", "grade_check"]
