"""Calibration mode: judge every labelled output the run's cascade did not judge, so each label meets a verdict."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.calibration._join import Joined

if TYPE_CHECKING:
    from evalkit.graders import JudgeFn
    from evalkit.suite import Suite


@dataclass
class ExtraJudging:
    """What judging the labelled outputs did: how many were judged, which failed and which judge it was."""

    judged: int = 0
    errors: list[str] = field(default_factory=list)
    judge: dict[str, Any] | None = None
    """The judge's description; with ``answered_by``, the model versions that gave the verdicts judged here."""


def suite_judge(
    suite: Suite, *, cache_dir: str | Path | None = None, cache_mode: str = "readwrite", client: Any = None
) -> Any:
    """The suite's judge as a run makes it: evalkit's `Judge` with the suite's settings, through the response
    cache and the same client the runner uses (``ANTHROPIC_API_KEY``/``ANTHROPIC_BASE_URL`` from the
    environment unless `client` is given)."""
    from evalkit._cache import ResponseCache
    from evalkit.graders import Judge

    if client is None:
        from evalkit._client import Client

        client = Client()
    cache = ResponseCache(cache_dir, mode=cache_mode)  # type: ignore[arg-type]
    return Judge(client=client, settings=suite.config.judge, cache=cache)


def judge_missing(joined: list[Joined], suite: Suite, judge: JudgeFn | Any) -> ExtraJudging:
    """Judge each joined label's output that has no verdict of its check (skipped by the cascade, or not judged).

    Parameters
    ----------
    joined:
        Labels joined with the run; those judged here get ``judge_source = "extra"``.
    suite:
        The run's suite (cases, checks, base folder).
    judge:
        A judge function ``(check, value, case) -> JudgeGrade``, or evalkit's `Judge` (called with each
        output's repeat, so its cache key is the one a run would use).

    Returns
    -------
    ExtraJudging
        The count judged and one line per output the judge could not grade (its verdict stays empty).
    """
    from evalkit.graders import GradingContext, JudgeGrade, grade_check

    cases = {c.id: c for c in suite.cases}
    describe = getattr(judge, "describe", None)
    out = ExtraJudging(judge=describe() if callable(describe) else None)
    for j in joined:
        if j.judge is not None or j.judge_kind != "judge" or j.check_index is None:
            continue
        case = cases.get(j.label.case_id)
        if case is None or j.check_index >= len(case.checks):
            out.errors.append(f"{j.label.case_id}: not in the suite any more; cannot judge it")
            continue
        check = case.checks[j.check_index]
        given: Any = judge
        fn: Any = functools.partial(given, repeat=j.repeat) if callable(describe) else given
        ctx = GradingContext(
            base_dir=suite.base_dir, output_schema=suite.output_schema, user=suite.user, judge=fn
        )
        try:
            grade = grade_check(check, j.output, case, ctx)
        except (
            Exception
        ) as exc:  # one output the judge cannot grade leaves that label unmatched, not the rest
            out.errors.append(f"{j.label.case_id} / {j.label.check}: {type(exc).__name__}: {exc}")
            continue
        j.judge = grade.passed
        j.judge_source = "extra"
        if isinstance(grade, JudgeGrade):
            if out.judge is not None and grade.model_version:  # the model that answered, not the one asked
                answered = out.judge.setdefault("answered_by", [])
                if grade.model_version not in answered:
                    answered.append(grade.model_version)
            j.judge_reasoning = grade.reasoning or grade.detail
            j.judge_criteria = list(grade.criteria) or None
        else:
            j.judge_reasoning = grade.detail
        out.judged += 1
    return out
