"""Graders, cheapest first: exact and schema, code checks, and the model judge."""

from evalkit.graders._base import Grade, GradingContext, JudgeGrade
from evalkit.graders._fence import FENCE_TAGS, neutralise
from evalkit.graders._grade import (
    NOT_JUDGED,
    CheckOutcome,
    JudgeFn,
    grade_case,
    grade_check,
)
from evalkit.graders._judge import (
    Judge,
    PairwiseJudge,
    PromptTemplate,
    RubricVerdict,
    load_template,
    rubric_prompt,
)
from evalkit.graders._normalize import normalize, parse_number

__all__ = [
    "FENCE_TAGS",
    "NOT_JUDGED",
    "CheckOutcome",
    "Grade",
    "GradingContext",
    "Judge",
    "JudgeFn",
    "JudgeGrade",
    "PairwiseJudge",
    "PromptTemplate",
    "RubricVerdict",
    "grade_case",
    "grade_check",
    "load_template",
    "neutralise",
    "normalize",
    "parse_number",
    "rubric_prompt",
]
