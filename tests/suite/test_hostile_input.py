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
}


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


def test_bom_hint_says_to_remove_it(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(OK).encode() + b"\n")
    _, problems = validate_suite(path)
    assert len(problems) == 1 and "remove the BOM" in problems[0].hint


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
