"""Which function grades which check model: filled by ``@grades(Model)`` next to each grade function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from evalkit.graders._base import Grade, GradingContext
from evalkit.suite import Case

GradeFn = Callable[[Any, Any, Case, GradingContext], Grade]
F = TypeVar("F", bound=GradeFn)

_GRADERS: dict[type, GradeFn] = {}


def grades(*models: type) -> Callable[[F], F]:
    """Register `fn(check, value, case, ctx) -> Grade` as the grader of each check model given."""

    def register(fn: F) -> F:
        for model in models:
            if model in _GRADERS:
                raise ValueError(f"{model.__name__} already has a grader: {_GRADERS[model].__qualname__}")
            _GRADERS[model] = fn
        return fn

    return register


def grader_for(check: Any) -> GradeFn:
    """The grade function registered for this check's model."""
    fn = _GRADERS.get(type(check))
    if fn is None:
        raise TypeError(f"no grader for check kind {getattr(check, 'kind', type(check).__name__)!r}")
    return fn


def registered() -> dict[type, GradeFn]:
    """Every check model with its grader (for tests and docs)."""
    return dict(_GRADERS)
