"""Every public statistic documents its parameters and returns and carries an example, and the examples run."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import evalkit.stats

MODULES = sorted(m.name for m in pkgutil.iter_modules(evalkit.stats.__path__, "evalkit.stats."))


@pytest.mark.parametrize("name", MODULES)
def test_examples_in_module_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def public_functions() -> list[tuple[str, object]]:
    return [
        (name, obj)
        for name in evalkit.stats.__all__
        if inspect.isfunction(obj := getattr(evalkit.stats, name))
    ]


@pytest.mark.parametrize(("name", "fn"), public_functions())
def test_public_function_is_documented_typed_and_keyword_only(name: str, fn: object) -> None:
    assert isinstance(fn, type(test_examples_in_module_run))
    doc = inspect.getdoc(fn) or ""
    assert "Parameters" in doc and "Returns" in doc and ">>>" in doc, name
    signature = inspect.signature(fn)
    for param in signature.parameters.values():
        assert param.annotation is not inspect.Parameter.empty, f"{name}({param.name}) has no type"
        # Options (parameters with a default) are keyword-only; run_b of estimate_mde is the second operand.
        if param.default is not inspect.Parameter.empty and (name, param.name) != ("estimate_mde", "run_b"):
            assert param.kind is inspect.Parameter.KEYWORD_ONLY, f"{name}({param.name}) is not keyword-only"
    assert signature.return_annotation is not inspect.Signature.empty, name


def test_every_module_with_public_functions_has_examples() -> None:
    def examples(module: ModuleType) -> int:
        return sum(len(t.examples) for t in doctest.DocTestFinder().find(module))

    for name in MODULES:
        module = importlib.import_module(name)
        if any(inspect.getmodule(fn) is module for _, fn in public_functions()):
            assert examples(module) > 0, name
