"""One error tree: every exception and warning a user can meet is defined in evalkit.errors, under EvalkitError
or EvalkitWarning, and the tree drawn in that module's docstring is the tree the classes make."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import subprocess
import sys
from typing import NoReturn

import pytest

import evalkit
import evalkit.errors as errors
from evalkit.errors import (
    CallError,
    CheckError,
    CheckTimeout,
    EvalkitError,
    EvalkitWarning,
    JudgeError,
    Problem,
    RulesFileError,
    TranscriptError,
)


def _module_names() -> list[str]:
    # a __main__ module runs its command when imported
    return [
        m.name
        for m in pkgutil.walk_packages(evalkit.__path__, "evalkit.")
        if m.name.rsplit(".", 1)[-1] != "__main__"
    ]


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception and warning class evalkit defines, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for name in _module_names():
        for value in vars(importlib.import_module(name)).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__.split(".")[0] == "evalkit"
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def _tree() -> list[tuple[int, str, list[str], str]]:
    """(depth, class name, other bases named in brackets, what it says) for each class line of the docstring's tree."""
    doc = errors.__doc__ or ""
    block = doc.split("The tree::\n", 1)[1]
    lines = []
    for line in block.splitlines()[1:]:
        if line and not line.startswith("    "):
            break  # the end of the indented block
        lines.append(line[4:])
    entry = re.compile(
        r"^(?P<lead>[ |]*(?:\+-- )?)(?P<name>[A-Z]\w*)(?: \((?P<extra>[\w, ]+)\))?(?P<said>.*)$"
    )
    tree = []
    for line in lines:
        found = entry.match(line)
        if found is None:  # a blank line, or a group's heading ("|   run problems")
            continue
        extra = [x.strip() for x in (found["extra"] or "").split(",") if x.strip()]
        tree.append((len(found["lead"]) // 4, found["name"], extra, found["said"].strip()))
    return tree


def test_every_public_exception_is_an_evalkit_error_or_warning_defined_in_evalkit_errors() -> None:
    classes = _exception_classes()
    assert len(classes) > 20  # every module was read
    stray = {
        name: cls
        for name, cls in classes.items()
        if not cls.__name__.startswith("_") and not issubclass(cls, EvalkitError | EvalkitWarning)
    }
    assert not stray, (
        f"name these with a leading underscore, or put them in evalkit.errors' tree: {sorted(stray)}"
    )
    elsewhere = sorted(
        name
        for name, cls in classes.items()
        if not cls.__name__.startswith("_") and cls.__module__ != "evalkit.errors"
    )
    assert not elsewhere, f"define these in evalkit/errors.py: {elsewhere}"


def test_the_internal_exceptions_are_private_and_outside_the_tree() -> None:
    private = [cls for cls in _exception_classes().values() if cls.__name__.startswith("_")]
    names = {cls.__name__ for cls in private}
    assert {"_StopRun", "_AuthFailure", "_NotCached", "_WorkerStopped", "_RequestError"} <= names
    assert not [cls for cls in private if issubclass(cls, EvalkitError | EvalkitWarning)]


def test_the_docstring_tree_names_every_class_and_only_classes() -> None:
    drawn = [name for _, name, _, _ in _tree()]
    assert len(drawn) == len(set(drawn)), "a class is drawn twice"
    defined = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, BaseException) and not name.startswith("_")
    }
    assert set(drawn) == defined
    exported = {name for name in errors.__all__ if isinstance(getattr(errors, name), type)}
    assert exported == defined | {"Problem"}


def test_the_docstring_tree_is_the_class_tree() -> None:
    parents: list[str] = []
    for depth, name, extra, said in _tree():
        cls = getattr(errors, name)
        parents = [*parents[:depth], name]
        assert said, f"{name}: say in a few words when it is raised"
        if depth == 0:
            assert cls in (EvalkitError, EvalkitWarning)
            assert [b.__name__ for b in cls.__bases__] == [
                "Exception" if cls is EvalkitError else "UserWarning"
            ]
            continue
        bases = [b.__name__ for b in cls.__bases__]
        assert bases == [parents[depth - 1], *extra], f"{name} derives from {bases}"


def test_errors_that_were_value_errors_still_are() -> None:
    assert issubclass(RulesFileError, ValueError) and issubclass(errors.GrainError, ValueError)


def test_importing_the_errors_loads_nothing_heavy() -> None:
    code = (
        "import sys, evalkit.errors; "
        "print(sorted(m for m in ('anthropic', 'polars', 'pydantic', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_call_error_pickles_and_compares_as_it_did() -> None:
    import pickle

    error = CallError("rate_limit", 429, "slow down", "req_1")
    assert pickle.loads(pickle.dumps(error)) == error and error.retryable
    assert str(error) == "rate_limit 429: slow down (request req_1)"
    assert not CallError("auth", 401).retryable
    assert CallError.from_dict(error.to_dict()) == error


def _exit_of(exc: BaseException, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from evalkit.cli._main import _main

    def command(args: argparse.Namespace) -> NoReturn:
        raise exc

    code = _main(argparse.Namespace(func=command))
    return code, capsys.readouterr().err


def test_the_command_line_says_each_error_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_of(EvalkitError("no such run"), capsys) == (2, "evalkit: error: no such run\n")
    assert _exit_of(JudgeError("no verdict"), capsys) == (2, "evalkit: error: no verdict\n")
    assert _exit_of(RulesFileError("rules.toml: bad"), capsys) == (2, "evalkit: error: rules.toml: bad\n")
    # a failed call says so first, as when it was not an EvalkitError
    code, err = _exit_of(CallError("timeout", None, "read timed out"), capsys)
    assert (code, err) == (2, "evalkit: error: an API call failed (timeout: read timed out)\n")
    # a suite's problems are listed one a line
    code, err = _exit_of(TranscriptError([Problem("t.jsonl", 2, "input", "missing")]), capsys)
    assert code == 2 and err.startswith("t.jsonl:2: input: missing\n") and "nothing was run" in err


def test_a_check_error_that_reaches_the_command_line_is_not_taken_for_bad_input(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # a run records a check's error in its result; one that escapes is a bug, and shows as one
    with pytest.raises(CheckTimeout):
        _exit_of(CheckTimeout("regex check ran past 2 s"), capsys)
    with pytest.raises(CheckError):
        _exit_of(CheckError("boom"), capsys)
