"""What every grader returns, and how a check finds its part of an output."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from evalkit.errors import OutputTooDeep
from evalkit.suite import Case, JudgeCheck, SuiteConfig, UserModule

_MISSING = object()


class Grade(BaseModel):
    """One check's verdict: passed, an optional score in [0, 1], and why in words."""

    passed: bool
    score: float | None = None
    detail: str = ""
    fields: dict[str, bool] | None = Field(default=None, description="Per-field verdicts for object outputs.")


class JudgeGrade(Grade):
    """A judge's verdict, with what it cost and which model gave it."""

    reasoning: str = ""
    criteria: list[dict[str, Any]] = Field(default_factory=list)
    model: str | None = None
    model_version: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    cache_hit: bool = False


JudgeFn = Callable[[JudgeCheck, Any, Case], Grade]


@dataclass
class GradingContext:
    """What graders may need beyond the output: the suite's folder, schema, user module and the judge."""

    base_dir: Path = field(default_factory=Path.cwd)
    output_schema: dict[str, Any] | None = None
    user: UserModule | None = None
    judge: JudgeFn | None = None
    #: seconds a regex, user check or candidate query may take; 0 = no limit (user checks run in-process)
    check_timeout_s: float = SuiteConfig.model_fields["check_timeout_s"].default


TOO_DEEP = (
    "the output is nested deeper than it can be read ({what}): no grader can look inside it; if the system is "
    "meant to return such output, grade its text with a regex or user check on the whole output (no field)"
)


def as_structured(value: Any) -> Any:
    """A string holding a JSON object or array is read as that object; anything else is left alone."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("```"):
            text = text.strip("`")
            text = text.split("\n", 1)[1] if "\n" in text else text
        if text[:1] in "{[":
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return value
            except RecursionError:
                raise OutputTooDeep(TOO_DEEP.format(what="RecursionError while parsing it")) from None
    return value


def get_field(output: Any, path: str | None) -> Any:
    """Follow a dotted path into an output; returns the module's _MISSING sentinel when absent."""
    if path is None:
        return output
    current = as_structured(output)
    for part in path.split("."):
        if isinstance(current, dict):
            if part not in current:
                return _MISSING
            current = current[part]
        elif isinstance(current, list) and part.lstrip("-").isdigit():
            idx = int(part)
            if not -len(current) <= idx < len(current):
                return _MISSING
            current = current[idx]
        else:
            return _MISSING
    return current


def is_missing(value: Any) -> bool:
    return value is _MISSING


def as_text(value: Any) -> str:
    """The text a text check reads: strings as they are, other values as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)
