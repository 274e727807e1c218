"""Hostile or odd input gets a located problem (file:line, field, what is wrong, what to do) and exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.suite import validate_suite

OK = {"id": "ok", "input": "q", "checks": [{"kind": "exact", "expected": "a"}]}


def _deep(n: int) -> str:
    return '{"id": "deep", "input": ' + "[" * n + "]" * n + ', "checks": [{"kind": "exact", "expected": 1}]}'


HOSTILE = {
    "duplicate key": (
        '{"id": "a", "id": "b", "input": "q", "checks": [{"kind": "json_valid"}]}',
        "id",
        "twice",
    ),
    "NaN": ('{"id": "a", "input": NaN, "checks": [{"kind": "json_valid"}]}', "(json)", "NaN is not JSON"),
    "Infinity": (
        '{"id": "a", "input": "q", "checks": [{"kind": "sums", "tolerance": Infinity}]}',
        "(json)",
        "Infinity",
    ),
    "tolerance NaN": (
        '{"id": "a", "input": "q", "checks": [{"kind": "sums", "tolerance": NaN}]}',
        "(json)",
        "NaN",
    ),
    "NUL in id": (json.dumps({**OK, "id": "a\u0000b"}), "id", "control or invisible"),
    "RLO in id": (json.dumps({**OK, "id": "inv\u202egnp.exe"}), "id", "right-to-left"),
    "5000 deep": (_deep(5000), "(json)", "nested too deeply"),
    "5000 digits": (
        '{"id": "a", "input": ' + "9" * 5000 + ', "checks": [{"kind": "json_valid"}]}',
        "(json)",
        "too long",
    ),
    "BOM": ("\ufeff" + json.dumps(OK), "(file)", "byte order mark"),
    "bad regex": (
        json.dumps({**OK, "id": "re", "checks": [{"kind": "regex", "pattern": "(unclosed"}]}),
        "checks[0].pattern",
        "regular expression",
    ),
    "a list": (json.dumps([OK]), "(case)", "a case is a JSON object"),
    "facts_from names nothing": (
        json.dumps({**OK, "id": "ff", "checks": [{"kind": "contains_all", "facts_from": "input.facts"}]}),
        "checks[0].facts_from",
        "the case's input has nothing at 'input.facts'",
    ),
    "retrieved_from names nothing": (
        json.dumps({**OK, "id": "rf", "input": {"chunk": []}, "checks": [{"kind": "citations_subset"}]}),
        "checks[0].retrieved_from",
        "nothing at 'chunks'",
    ),
    "duplicate id": (json.dumps(OK), "id", "duplicate id 'ok' (first used on line 1)"),
    "empty id": (json.dumps({**OK, "id": ""}), "id", "at least 1 character"),
    "unknown check kind": (
        json.dumps({**OK, "id": "u", "checks": [{"kind": "vibes"}]}),
        "checks[0].kind",
        "unknown check kind 'vibes'",
    ),
    "misspelt key": (json.dumps({**OK, "id": "k", "expectd": "a"}), "expectd", "unknown key"),
    "no input": (json.dumps({"id": "n", "checks": [{"kind": "exact", "expected": "a"}]}), "input", "missing"),
    "no checks": (json.dumps({"id": "c", "input": "q", "checks": []}), "checks", "at least 1 item"),
    "truncated JSON": ('{"id": "t", "input": "q"', "(json)", "invalid JSON"),
    "a bare string": ('"just a string"', "(case)", "a case is a JSON object"),
    "a number": ("42", "(case)", "a case is a JSON object"),
    "judge without rubric": (
        json.dumps({**OK, "id": "j", "checks": [{"kind": "judge", "rubric": []}]}),
        "checks[0].rubric",
        "at least 1 item",
    ),
    "slice and category": (
        json.dumps({**OK, "id": "s", "slice": "a", "category": "b"}),
        "category",
        "not both",
    ),
    "unknown split": (json.dumps({**OK, "id": "sp", "split": "train"}), "split", "'dev' or 'holdout'"),
    "invalid inline schema": (
        json.dumps({**OK, "id": "sc", "checks": [{"kind": "schema", "schema": {"type": "nope"}}]}),
        "checks[0].schema/type",
        "not a valid JSON Schema",
    ),
    "remote $ref": (
        json.dumps(
            {
                **OK,
                "id": "sr",
                "checks": [{"kind": "schema", "schema": {"$ref": "http://127.0.0.1:1/x.json"}}],
            }
        ),
        "checks[0].schema/$ref",
        "points outside the schema",
    ),
    "unknown user check": (
        json.dumps({**OK, "id": "uc", "checks": [{"kind": "user", "name": "nope"}]}),
        "checks[0].name",
        "user check 'nope' not found",
    ),
    "two expectations": (
        json.dumps({"id": "b", "category": "x", "input": "q", "expected_exact": "a", "must_contain": ["a"]}),
        "expected_exact, must_contain",
        "exactly one of",
    ),
}

# located and refused, with what to do in the message itself (no separate hint yet)
HOSTILE_UNHINTED = {
    "id a number": (json.dumps({**OK, "id": 7}), "id", "valid string"),
    "unknown grader": (
        json.dumps({"id": "g", "input": "q", "expected": "a", "grader": "magic"}),
        "grader",
        "use one of",
    ),
    "expected and any_of": (
        json.dumps({**OK, "id": "e", "checks": [{"kind": "exact", "expected": "a", "any_of": ["b"]}]}),
        "checks[0]",
        "give expected or any_of, not both",
    ),
    "negative word limit": (
        json.dumps({**OK, "id": "w", "checks": [{"kind": "max_words", "limit": -3}]}),
        "checks[0].limit",
        "greater than or equal to 0",
    ),
    "field not a string": (
        json.dumps({**OK, "id": "f", "checks": [{"kind": "exact", "expected": "a", "field": 3}]}),
        "checks[0].field",
        "valid string",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE_UNHINTED))
def test_hostile_line_without_a_hint_is_still_located_and_exit_2(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line, field, said = HOSTILE_UNHINTED[name]
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(OK) + "\n" + line + "\n", encoding="utf-8")
    _, problems = validate_suite(path)
    (problem,) = [p for p in problems if p.line == 2]
    assert problem.field == field and said in problem.message, problem
    capsys.readouterr()
    assert main(["validate", str(path)]) == 2
    assert f"{path}:2" in "".join(capsys.readouterr())


def test_a_file_that_is_not_utf8_is_a_located_problem(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes((json.dumps(OK) + "\n").encode() + b'{"id": "\xff\xfe", "input": "q"}\n')
    _, problems = validate_suite(path)
    assert len(problems) == 1 and "not UTF-8" in problems[0].message and problems[0].hint


def test_there_are_at_least_25_hostile_inputs() -> None:
    assert len(HOSTILE) + len(HOSTILE_UNHINTED) + 1 >= 25


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_line_is_a_located_problem_with_a_hint(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line, field, said = HOSTILE[name]
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(OK) + "\n" + line + "\n", encoding="utf-8")
    _, problems = validate_suite(path)
    assert problems, name
    (problem,) = [p for p in problems if p.line == 2]
    assert problem.field == field and said in problem.message and problem.hint, problem
    capsys.readouterr()
    assert main(["validate", str(path)]) == 2
    shown = capsys.readouterr()
    assert f"{path}:2" in shown.out + shown.err


def test_a_bom_at_the_start_of_the_file_is_accepted(tmp_path: Path) -> None:
    # what Windows editors write; inside the file a BOM is still refused (the "BOM" case above)
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(OK).encode() + b"\n")
    suite, problems = validate_suite(path)
    assert not problems and suite is not None and [c.id for c in suite.cases] == [OK["id"]]


def test_moderate_nesting_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(_deep(200) + "\n", encoding="utf-8")
    suite, problems = validate_suite(path)
    assert not problems and suite is not None


def test_validate_writes_no_pycache_into_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as for a user without PYTHONDONTWRITEBYTECODE
    root = tmp_path / "s"
    root.mkdir()
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "a", "input": "q", "checks": [{"kind": "user", "name": "ok"}]}) + "\n",
        encoding="utf-8",
    )
    (root / "helpers.py").write_text("VALUE = 1\n", encoding="utf-8")
    (root / "checks.py").write_text(
        "import sys\nsys.path.insert(0, __file__.rsplit('/', 1)[0])\nimport helpers\nimport evalkit\n\n"
        "@evalkit.check('ok')\ndef ok(value, case):\n    return True\n",
        encoding="utf-8",
    )
    assert main(["validate", str(root)]) == 0
    assert not list(root.rglob("__pycache__"))
