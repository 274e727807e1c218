"""What a result is: the check and case models and their statuses (the one place statuses are spelt out)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, Field, model_validator

from evalkit._results._upgrade import upgrade_case

CaseStatus = Literal["pass", "fail", "error", "not_scored"]
CheckStatus = Literal["pass", "fail", "skipped", "not_judged", "error"]
"""A check's status: ``skipped`` on purpose (a cheaper check failed first, so its verdict is not needed),
``not_judged`` when it should have run but could not (no judge was available): its verdict is unknown."""
CASE_STATUSES: Final[tuple[str, ...]] = get_args(CaseStatus)
CHECK_STATUSES: Final[tuple[str, ...]] = get_args(CheckStatus)
SCORED_STATUSES: Final[tuple[str, ...]] = ("pass", "fail")
"""The statuses a pass rate counts; every other status is reported beside it."""
NOT_RUN_STATUSES: Final[tuple[str, ...]] = ("skipped", "not_judged")
"""The check statuses of a check that did not run (so nothing was paid for it)."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class CheckResult(BaseModel):
    """One check's verdict on one output."""

    index: int
    kind: str
    name: str
    field: str | None = None
    tier: str
    status: CheckStatus
    passed: bool | None = None
    score: float | None = None
    detail: str = ""
    skipped_reason: str | None = None
    """Why the check was skipped or not judged."""
    error: str | None = None
    error_kind: str | None = None
    """Why it errored, one of ``ERROR_KINDS`` (a str, so that a kind added later does not make a line unreadable)."""
    judge_model: str | None = None
    judge_model_version: str | None = None
    judge_reasoning: str | None = None
    judge_criteria: list[dict[str, Any]] | None = None
    judge_input_tokens: int | None = None
    judge_output_tokens: int | None = None
    judge_cost_usd: float | None = None
    judge_latency_s: float | None = None
    judge_cache_hit: bool | None = None


class CaseResult(BaseModel):
    """One (case, repeat): the output, what it cost, and every check's verdict."""

    run_id: str
    suite: str
    suite_version: str
    case_id: str
    slice: str
    split: str = "dev"
    repeat: int = 0
    status: CaseStatus
    output: Any = None
    output_hash: str | None = None
    error: str | None = None
    error_kind: str | None = None
    """Why the case has no output, one of ``ERROR_KINDS``."""
    system: str
    system_model: str | None = None
    system_model_version: str | None = None
    request_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    cache_hit: bool = False
    checks: list[CheckResult] = Field(default_factory=list)
    finished_at: str = Field(default_factory=lambda: now_iso())

    @property
    def key(self) -> tuple[str, int]:
        return (self.case_id, self.repeat)

    @model_validator(mode="after")
    def _upgraded(self) -> CaseResult:
        # a line journalled by an older evalkit reads as one written now (see _upgrade.py)
        upgrade_case(self)
        return self


def case_status(checks: Iterable[CheckResult]) -> CaseStatus:
    """error if any check errored; else fail if any failed; else not scored if a judge check could not run;
    else pass if any passed."""
    statuses = [c.status for c in checks]
    if "error" in statuses:
        return "error"
    if "fail" in statuses:
        return "fail"
    if "not_judged" in statuses:
        return "not_scored"
    if "pass" in statuses:
        return "pass"
    return "not_scored"
