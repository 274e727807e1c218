"""`evalkit run` exit codes: a run that scored nothing because every check errored fails; errors among scored
cases fail only with --fail-on-error; no suite is a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main

RAISES_ALWAYS = "def predict(input):\n    raise ValueError('model unreachable')\n"
RAISES_ONCE = (
    "def predict(input):\n    if input == 'b':\n        raise ValueError('bad case')\n    return input\n"
)


def suite_with(tmp_path: Path, system: str) -> Path:
    root = tmp_path / "suite"
    root.mkdir(parents=True)
    rows = [{"id": x, "input": x, "expected": x, "grader": "exact"} for x in "abc"]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "sys.py").write_text(system)
    return root


def run(tmp_path: Path, system: str, *extra: str) -> int:
    root = suite_with(tmp_path, system)
    argv = ["run", str(root), "--system", f"{root / 'sys.py'}:predict", "--cache", "off", "-q"]
    return main([*argv, "--runs-dir", str(tmp_path / "runs"), *extra])


def test_a_run_whose_every_check_errored_exits_1_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, RAISES_ALWAYS) == 1
    out = capsys.readouterr().out
    assert "exit 1: no check could be scored: every check errored" in out
    assert "evalkit run --resume" in out  # the way out is still printed


def test_some_errors_exit_0_unless_fail_on_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path / "plain", RAISES_ONCE) == 0
    assert "exit 1" not in capsys.readouterr().out
    assert run(tmp_path / "strict", RAISES_ONCE, "--fail-on-error") == 1
    assert "exit 1: 1 case ended in an error and --fail-on-error was given" in capsys.readouterr().out


def test_fail_on_error_does_not_fail_a_clean_run(tmp_path: Path) -> None:
    assert run(tmp_path, "def predict(input):\n    return input\n", "--fail-on-error") == 0


def test_run_with_no_suite_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("usage: evalkit run")
    assert "evalkit run: error: give a SUITE" in captured.err
