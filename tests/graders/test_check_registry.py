"""The one registry of check kinds: every model has a kind, a tier and exactly one grader."""

from __future__ import annotations

import typing

import pytest

from evalkit.graders import _grade  # noqa: F401  (its import registers every grader)
from evalkit.graders._registry import grader_for, grades, registered
from evalkit.suite import parse_case
from evalkit.suite._checks import CHECK_KINDS, CHECK_MODELS, Check, ExactCheck, kind_of


def test_every_check_model_has_exactly_one_grader() -> None:
    graders = registered()
    assert set(graders) == set(CHECK_MODELS)
    for model in CHECK_MODELS:
        assert model.tier in ("exact", "code", "judge")


def test_a_second_grader_for_a_model_is_refused() -> None:
    with pytest.raises(ValueError, match="already has a grader"):
        grades(ExactCheck)(lambda check, value, case, ctx: None)  # type: ignore[arg-type,return-value]
    assert registered()[ExactCheck].__name__ == "grade_exact"


def test_the_union_and_the_kinds_come_from_the_list_of_models() -> None:
    union = typing.get_args(typing.get_args(Check)[0])
    assert union == CHECK_MODELS
    assert tuple(kind_of(m) for m in CHECK_MODELS) == CHECK_KINDS
    assert len(set(CHECK_KINDS)) == len(CHECK_KINDS)


def test_an_unknown_kind_lists_the_registered_kinds() -> None:
    _, problems = parse_case({"id": "a", "input": "q", "checks": [{"kind": "exakt", "expected": "x"}]})
    assert problems and "exakt" in problems[0].message
    assert all(kind in problems[0].hint for kind in CHECK_KINDS)


def test_an_unregistered_check_object_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="no grader"):
        grader_for(object())
