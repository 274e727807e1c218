"""Exact and schema graders: the cheapest checks, run first."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from evalkit.graders._base import Grade, GradingContext, as_structured, is_missing
from evalkit.graders._normalize import normalize
from evalkit.graders._registry import grades
from evalkit.suite import Case, ExactCheck, SchemaCheck, offline_registry


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _compare(check: ExactCheck, value: Any, expected: Any) -> Grade:
    if isinstance(expected, dict):
        actual = as_structured(value)
        if not isinstance(actual, dict):
            return Grade(passed=False, score=0.0, detail=f"expected an object, got {type(actual).__name__}")
        verdicts: dict[str, bool] = {}
        wrong: list[str] = []
        for key, want in expected.items():
            got = actual.get(key)
            ok = key in actual and normalize(got, check.normalize) == normalize(want, check.normalize)
            verdicts[key] = ok
            if not ok:
                wrong.append(
                    f"{key}: expected {_show(want)}, got {_show(got) if key in actual else 'nothing'}"
                )
        score = sum(verdicts.values()) / len(verdicts) if verdicts else 1.0
        detail = "all fields match" if not wrong else "; ".join(wrong)
        return Grade(passed=not wrong, score=score, detail=detail, fields=verdicts)
    ok = normalize(value, check.normalize) == normalize(expected, check.normalize)
    detail = "matches" if ok else f"expected {_show(expected)}, got {_show(value)}"
    return Grade(passed=ok, score=1.0 if ok else 0.0, detail=detail)


@grades(ExactCheck)
def grade_exact(check: ExactCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    """Equality after the check's normalisers; an expected object is compared field by field.

    With `any_of`, the output passes when it equals any one of the accepted outputs; when none matches, the
    closest one (the best score, the first on a tie) gives the score and the per-field verdicts.
    """
    if is_missing(value):
        return Grade(passed=False, score=0.0, detail=f"output has no field {check.field!r}")
    if check.any_of is None:
        return _compare(check, value, check.expected)
    grades = [_compare(check, value, accepted) for accepted in check.any_of]
    n = len(grades)
    for i, grade in enumerate(grades):
        if grade.passed:
            return grade.model_copy(update={"detail": f"matches accepted output {i + 1} of {n}"})
    best = max(range(n), key=lambda i: (grades[i].score or 0.0, -i))
    if all(not isinstance(a, dict) for a in check.any_of):
        shown = ", ".join(_show(a, 40) for a in check.any_of[:5]) + (", ..." if n > 5 else "")
        detail = f"expected one of {shown}; got {_show(value)}"
    else:
        detail = f"matches none of the {n} accepted outputs; closest ({best + 1}): {grades[best].detail}"
    return grades[best].model_copy(update={"detail": detail})


@grades(SchemaCheck)
def grade_schema(check: SchemaCheck, value: Any, case: Case, ctx: GradingContext) -> Grade:
    """Validate against the check's JSON Schema, a pydantic model from the suite, or the suite's output schema."""
    import jsonschema
    from referencing.exceptions import Unresolvable

    if is_missing(value):
        return Grade(passed=False, score=0.0, detail=f"output has no field {check.field!r}")
    data = as_structured(value)
    if check.model is not None:
        model = ctx.user.model(check.model) if ctx.user else None
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return Grade(passed=False, score=0.0, detail=f"no pydantic model {check.model!r} in the suite")
        try:
            model.model_validate(data)
        except ValidationError as exc:
            errs = [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:5]]
            return Grade(
                passed=False, score=0.0, detail=f"{exc.error_count()} schema error(s): " + "; ".join(errs)
            )
        return Grade(passed=True, score=1.0, detail=f"valid {check.model}")
    schema = check.json_schema if check.json_schema is not None else ctx.output_schema
    if schema is None:
        return Grade(passed=False, score=0.0, detail="no schema to check against")
    # a $ref to a URL is refused, never fetched: the verdict must not depend on what a server says today
    validator = jsonschema.validators.validator_for(schema)(schema, registry=offline_registry())
    try:
        errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path)))
    except Unresolvable as exc:
        raise ValueError(
            f"the schema's $ref {getattr(exc, 'ref', '?')!r} cannot be resolved: schemas are never fetched; "
            "put the referenced schema under $defs (evalkit validate finds these)"
        ) from None
    if errors:
        shown = [f"{'.'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:5]]
        return Grade(passed=False, score=0.0, detail=f"{len(errors)} schema error(s): " + "; ".join(shown))
    return Grade(passed=True, score=1.0, detail="valid against the schema")
