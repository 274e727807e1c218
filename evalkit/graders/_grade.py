"""Graders, cheapest first: exact/schema, then code checks, then the model judge.

`grade_case` runs a case's checks in that order; a judge check is skipped (and says why) when a cheaper check
on the same field failed (or errored), so a wrong answer never pays for a judge call.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from evalkit._results import CheckStatus, ErrorKind, error_kind
from evalkit.errors import CheckError, CheckTimeout

# imported for their @grades registrations
from evalkit.graders import _code, _exact, _tools  # noqa: F401
from evalkit.graders._base import TOO_DEEP, Grade, GradingContext, JudgeFn, get_field
from evalkit.graders._registry import grader_for, grades
from evalkit.suite import Case, JudgeCheck, covers

Status = CheckStatus

NOT_JUDGED = "not judged: no judge available (set ANTHROPIC_API_KEY, or pass a judge, to run judge checks)"
"""The skipped_reason of a ``not_judged`` check."""


@dataclass
class CheckOutcome:
    """One check's result within a case: its verdict, or why it was skipped, or the error that stopped it."""

    index: int
    check: Any
    status: Status
    grade: Grade | None = None
    skipped_reason: str | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None

    @property
    def passed(self) -> bool | None:
        return self.grade.passed if self.status in ("pass", "fail") and self.grade else None


@grades(JudgeCheck)
def grade_judge(check: JudgeCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    """Ask the context's judge; grade_case never calls this without one (it skips the check instead)."""
    if ctx.judge is None:
        raise RuntimeError(NOT_JUDGED)
    return ctx.judge(check, value, case)


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, CheckError):
        return exc.shown
    if isinstance(exc, RecursionError):
        return "RecursionError: " + TOO_DEEP.format(what=str(exc))
    return f"{type(exc).__name__}: {exc}"


def grade_check(check: Any, output: Any, case: Case, ctx: GradingContext) -> Grade:
    """Grade one check against an output with its kind's registered grader."""
    return grader_for(check)(check, get_field(output, check.field), case, ctx)


def grade_case(
    case: Case,
    output: Any,
    ctx: GradingContext,
    judge: JudgeFn | None = None,
    skip_judge_when: Literal["same_field", "any_failed"] = "same_field",
) -> list[CheckOutcome]:
    """Run a case's checks cheapest first; results come back in the case's own check order."""
    if judge is not None:
        ctx = dataclasses.replace(ctx, judge=judge)
    judge = ctx.judge
    order = sorted(range(len(case.checks)), key=lambda i: (case.checks[i].order, i))
    outcomes: dict[int, CheckOutcome] = {}
    failed: list[Any] = []
    errored: set[int] = set()
    for i in order:
        chk = case.checks[i]
        if chk.tier == "judge":
            blockers = [f for f in failed if skip_judge_when == "any_failed" or covers(f.field, chk.field)]
            if blockers:
                names = ", ".join(b.label for b in blockers)
                how = "errored" if all(id(b) in errored for b in blockers) else "failed"
                outcomes[i] = CheckOutcome(i, chk, "skipped", skipped_reason=f"cheaper check {how}: {names}")
                continue
            if judge is None:
                outcomes[i] = CheckOutcome(i, chk, "not_judged", skipped_reason=NOT_JUDGED)
                continue
        try:
            grade = grade_check(chk, output, case, ctx)
        except (Exception, SystemExit) as exc:
            # a user check's sys.exit() is that check's error, not the end of the run
            kind = error_kind(exc, "judge_error" if chk.tier == "judge" else "check_exception")
            if isinstance(exc, CheckTimeout):
                kind = "check_timeout"
            outcomes[i] = CheckOutcome(i, chk, "error", error=_error_text(exc), error_kind=kind)
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
