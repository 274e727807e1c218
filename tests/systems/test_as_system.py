"""as_system: a plain callable, a spec, a file path, or a system is a system; the System protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit._runner import Runner, RunOptions
from evalkit._systems import ClaudeSystem, PythonSystem, System, as_system, load_system
from evalkit.errors import SystemLoadError
from evalkit.suite import Suite, load_suite


def parity(input: dict[str, int]) -> dict[str, str]:
    return {"label": "odd" if input["n"] % 2 else "even"}


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    root = tmp_path / "suite"
    root.mkdir()
    rows = [
        {"id": f"c{i}", "input": {"n": i}, "checks": [{"kind": "exact", "field": "label", "expected": label}]}
        for i, label in enumerate(["even", "odd", "even"])
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "suite.toml").write_text('name = "parity"\n')
    (root / "baseline.py").write_text("def predict(input):\n    return {'label': 'even'}\n")
    (root / "prompt.md").write_text("Say whether n is odd or even.\n")
    return load_suite(root)


def test_a_plain_function_is_a_system_the_runner_runs(suite: Suite, tmp_path: Path) -> None:
    system = as_system(parity)
    assert isinstance(system, PythonSystem) and isinstance(system, System)
    assert system.name == f"{__name__}:parity" and system.model is None and not system.free
    assert (
        system.origin == str(Path(__file__).resolve()) and system.code_hash
    )  # a changed file is a changed system
    outcome = Runner(
        suite, system, RunOptions(cache_mode="off", out_root=tmp_path / "runs", progress=False)
    ).run()
    assert [r.status for r in outcome.results] == ["pass", "pass", "pass"]


def test_a_lambda_and_a_callable_object_are_systems() -> None:
    class Pipeline:
        def __call__(self, input: object) -> str:
            return "x"

    assert as_system(lambda input: input).fn(1) == 1  # type: ignore[union-attr]
    assert as_system(Pipeline()).fn(None) == "x"  # type: ignore[union-attr]


def test_a_callable_that_cannot_take_the_input_or_is_async_is_refused() -> None:
    async def later(input: object) -> object:
        return input

    with pytest.raises(SystemLoadError, match="one argument, the case's input"):
        as_system(lambda: None)
    with pytest.raises(SystemLoadError, match="async def"):
        as_system(later)


def test_specs_and_paths_load_as_load_system_does(suite: Suite, tmp_path: Path) -> None:
    given = load_system("baseline", suite)
    assert as_system(given) is given
    assert as_system("baseline", suite=suite).describe() == given.describe()
    assert isinstance(as_system("claude", suite=suite), ClaudeSystem)
    pipe = tmp_path / "pipe.py"
    pipe.write_text("def predict(input):\n    return 'from file'\n")
    for obj in (pipe, str(pipe), f"{pipe}:predict"):
        system = as_system(obj)
        assert isinstance(system, PythonSystem) and system.fn(None) == "from file", obj
        assert system.name == f"{pipe.resolve()}:predict"  # what a resume finds again from any directory


def test_what_is_not_a_system_says_what_is(tmp_path: Path) -> None:
    with pytest.raises(SystemLoadError, match="pass the suite too"):
        as_system("claude")
    with pytest.raises(SystemLoadError, match=r"cannot make a system of 3 \(int\)"):
        as_system(3)
    with pytest.raises(SystemLoadError, match="not found"):
        as_system(tmp_path / "missing.py")


def test_both_builtin_systems_satisfy_the_protocol(suite: Suite) -> None:
    for system in (load_system("baseline", suite), load_system("claude", suite)):
        assert isinstance(system, System)
        assert isinstance(system.describe(), dict) and system.name
    assert load_system("baseline", suite).free and not load_system("claude", suite).free
