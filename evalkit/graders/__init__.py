"""Graders, cheapest first: exact and schema, code checks, and the model judge."""

from evalkit._lazy import INTERNAL, attach
from evalkit.graders._base import Grade, GradingContext, JudgeGrade
from evalkit.graders._fence import FENCE_TAGS, neutralise
from evalkit.graders._grade import CheckOutcome, grade_case, grade_check
from evalkit.graders._judge import (
    Judge,
    PairwiseJudge,
    PromptTemplate,
    RubricVerdict,
    load_template,
    rubric_prompt,
)
from evalkit.graders._normalize import normalize, parse_number

if INTERNAL:
    from evalkit.graders._base import get_field, is_missing
    from evalkit.graders._grade import NOT_JUDGED, JudgeFn
    from evalkit.graders._tools import tool_calls
    from evalkit.graders._worker import CAN_FORK, call_user_check

__getattr__, __dir__, __all__ = attach(__name__, __file__)
