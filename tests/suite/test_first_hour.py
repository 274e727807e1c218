"""What a new user meets in the first hour: aliases accepted everywhere, near-miss keys named, exits contained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.graders import GradingContext, grade_case
from evalkit.suite import load_user_module, parse_case, validate_suite


def test_slice_on_the_one_expectation_form_and_category_on_the_checks_form() -> None:
    blog, problems = parse_case({"id": "a", "input": "q", "expected_exact": "x", "slice": "s1"})
    assert not problems and blog is not None and blog.slice == "s1"
    checks, problems = parse_case(
        {"id": "b", "input": "q", "category": "s2", "checks": [{"kind": "json_valid"}]}
    )
    assert not problems and checks is not None and checks.slice == "s2"
    course, problems = parse_case(
        {"id": "c", "input": "q", "grader": "exact", "expected": 1, "category": "s3"}
    )
    assert not problems and course is not None and course.slice == "s3"


def test_slice_and_category_together_is_a_problem() -> None:
    _, problems = parse_case({"id": "a", "input": "q", "expected_exact": "x", "slice": "s", "category": "t"})
    assert [p.field for p in problems] == ["category"]


@pytest.mark.parametrize(
    ("case", "near"),
    [
        ({"id": "a", "input": "q", "expected_exact": "x", "slcie": "s"}, "slice"),
        (
            {"id": "a", "input": "q", "checks": [{"kind": "exact", "expected": 1, "normalise": []}]},
            "normalize",
        ),
        ({"id": "a", "input": "q", "checks": [{"kind": "regex", "patern": "x"}]}, "pattern"),
    ],
)
def test_an_unknown_key_gets_the_nearest_known_one(case: dict[str, object], near: str) -> None:
    _, problems = parse_case(case)
    assert any(p.message == "unknown key" and f"did you mean {near!r}" in p.hint for p in problems), problems


def _user_suite(tmp_path: Path, checks_py: str) -> Path:
    root = tmp_path / "s"
    root.mkdir()
    case = {"id": "a", "input": "q", "checks": [{"kind": "user", "name": "ok"}]}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    (root / "checks.py").write_text(checks_py, encoding="utf-8")
    return root


def test_sys_exit_in_checks_py_is_a_located_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _user_suite(tmp_path, "import sys\nsys.exit(0)\n")
    assert main(["validate", str(root)]) == 2
    shown = capsys.readouterr()
    assert "checks.py" in shown.out + shown.err and "SystemExit" in shown.out + shown.err


def test_sys_exit_in_a_user_check_is_that_checks_error(tmp_path: Path) -> None:
    root = _user_suite(
        tmp_path,
        "import sys\nimport evalkit\n\n@evalkit.check('ok')\ndef ok(value, case):\n    sys.exit(3)\n",
    )
    suite, problems = validate_suite(root)
    assert not problems and suite is not None
    ctx = GradingContext(base_dir=root, user=load_user_module(root / "checks.py"))
    (outcome,) = grade_case(suite.cases[0], "out", ctx)
    assert outcome.status == "error" and "SystemExit" in (outcome.error or "")
