"""Case forms, normalisation to checks, validation with located errors, suite version and save."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.errors import SuiteValidationError
from evalkit.suite import (
    ContainsAllCheck,
    ExactCheck,
    JudgeCheck,
    SchemaCheck,
    cases_version,
    load_suite,
    parse_case,
    validate_suite,
)


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def test_course_form_exact() -> None:
    case, problems = parse_case(
        {
            "id": "a",
            "input": {"t": "x"},
            "expected": "billing",
            "grader": "exact",
            "slice": "s",
            "source": "synthetic",
        }
    )
    assert not problems and case is not None
    assert case.slice == "s"
    assert case.checks == [ExactCheck(expected="billing")]


def test_course_form_schema_expands_to_schema_then_fields() -> None:
    case, problems = parse_case(
        {
            "id": "a",
            "input": "doc",
            "expected": {"total": 12, "currency": "EUR"},
            "grader": "schema",
            "schema": {"type": "object"},
        }
    )
    assert not problems and case is not None
    kinds = [(c.kind, c.field) for c in case.checks]
    assert kinds == [("schema", None), ("exact", "total"), ("exact", "currency")]
    assert isinstance(case.checks[0], SchemaCheck) and case.checks[0].json_schema == {"type": "object"}


def test_course_form_contains_judge_and_code() -> None:
    c1, p1 = parse_case({"id": "a", "input": "q", "expected": ["14 days"], "grader": "contains"})
    c2, p2 = parse_case({"id": "b", "input": "q", "expected": ["cites the policy"], "grader": "judge"})
    c3, p3 = parse_case(
        {"id": "c", "input": "q", "expected": [{"kind": "max_words", "limit": 5}], "grader": "code"}
    )
    assert not (p1 or p2 or p3)
    assert c1 and isinstance(c1.checks[0], ContainsAllCheck)
    assert c2 and isinstance(c2.checks[0], JudgeCheck) and c2.checks[0].rubric == ["cites the policy"]
    assert c3 and c3.checks[0].kind == "max_words"


def test_blog_form_each_key() -> None:
    base = {"id": "x", "category": "refunds", "input": "How long do refunds take?"}
    exact, _ = parse_case({**base, "expected_exact": "14 days"})
    facts, _ = parse_case({**base, "must_contain": ["14 days"]})
    rubric, _ = parse_case({**base, "rubric": "Answers with the refund window"})
    assert exact and exact.slice == "refunds" and exact.checks[0].kind == "exact"
    assert facts and facts.checks[0].kind == "contains_all"
    assert (
        rubric
        and isinstance(rubric.checks[0], JudgeCheck)
        and rubric.checks[0].rubric == ["Answers with the refund window"]
    )


def test_multi_check_form_keeps_input_exactly() -> None:
    raw_input = {"b": [1, 2.5, None], "a": {"nested": "ü"}}
    case, problems = parse_case(
        {
            "id": "m",
            "input": raw_input,
            "split": "holdout",
            "checks": [
                {"kind": "exact", "field": "label", "expected": "shipping"},
                {"kind": "contains_all", "field": "draft", "facts": ["A-1", ["refund", "money back"]]},
                {"kind": "judge", "field": "draft", "rubric": ["Answers the question"]},
            ],
        }
    )
    assert not problems and case is not None
    assert case.input == raw_input and case.split == "holdout"
    assert [c.tier for c in case.checks] == ["exact", "code", "judge"]


def test_blog_form_mix_is_an_error() -> None:
    case, problems = parse_case(
        {"id": "x", "input": "q", "expected_exact": "a", "must_contain": ["a"]}, "f.jsonl", 3
    )
    assert case is None
    assert len(problems) == 1
    assert "exactly one of" in problems[0].message
    assert str(problems[0]).startswith("f.jsonl:3: expected_exact, must_contain:")


@pytest.mark.parametrize(
    ("obj", "field", "needle"),
    [
        ({"input": "q", "expected": "a", "grader": "exact"}, "id", "missing"),
        ({"id": "x", "input": "q", "expected": "a", "grader": "fuzzy"}, "grader", "unknown grader"),
        ({"id": "x", "input": "q", "checks": [{"kind": "vibes"}]}, "checks[0].kind", "unknown check kind"),
        ({"id": "x", "input": "q", "rubric": []}, "rubric", ""),
        ({"id": "x", "input": "q", "checks": [{"kind": "contains_all", "facts": []}]}, "checks[0].facts", ""),
        (
            {"id": "x", "input": "q", "checks": [{"kind": "max_words", "limit": "ten"}]},
            "checks[0].limit",
            "integer",
        ),
        (
            {"id": "x", "input": "q", "expected": "a", "grader": "exact", "colour": "red"},
            "colour",
            "unknown key",
        ),
        (
            {"id": "x", "input": "q", "checks": [{"kind": "regex", "pattern": "("}]},
            "checks[0].pattern",
            "regular expression",
        ),
        ({"id": "x", "expected": "a", "grader": "exact"}, "input", "missing"),
        ({"id": 7, "input": "q", "expected": "a", "grader": "exact"}, "id", "string"),
    ],
)
def test_each_fault_is_located(obj: dict[str, object], field: str, needle: str) -> None:
    case, problems = parse_case(obj, "s.jsonl", 9)
    assert case is None
    assert problems, obj
    fields = [p.field for p in problems]
    assert field in fields, fields
    mine = next(p for p in problems if p.field == field)
    assert needle.lower() in mine.message.lower()
    assert str(mine).startswith(f"s.jsonl:9: {field}: ")


def test_read_reports_every_problem_with_lines(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "cases.jsonl",
        [
            {"id": "a", "input": "q", "expected": "x", "grader": "exact"},
            "{not json",
            {"id": "a", "input": "q", "expected": "y", "grader": "exact"},
            {"id": "c", "input": "q", "expected": "y", "grader": "nope"},
        ],
    )
    suite, problems = validate_suite(path)
    assert suite is None
    lines = sorted((p.line, p.field) for p in problems)
    assert lines == [(2, "(json)"), (3, "id"), (4, "grader")]
    dup = next(p for p in problems if p.field == "id")
    assert "first used on line 1" in dup.message


def test_load_suite_raises_one_exception_with_all_problems(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", ["[1,2]", {"id": "b"}, "nope"])
    with pytest.raises(SuiteValidationError) as info:
        load_suite(path)
    assert len(info.value.problems) == 3
    assert "3 problems found" in str(info.value)


def _suite_dir(tmp_path: Path, toml: str, rows: list[object], extra: dict[str, str] | None = None) -> Path:
    root = tmp_path / "s"
    root.mkdir()
    (root / "suite.toml").write_text(toml)
    write_jsonl(root / "cases.jsonl", rows)
    for name, text in (extra or {}).items():
        (root / name).write_text(text)
    return root


def test_suite_folder_with_toml_schema_and_user_checks(tmp_path: Path) -> None:
    root = _suite_dir(
        tmp_path,
        'name = "demo"\noutput_schema = "schema.json"\nchecks = "checks.py"\n[model]\nname = "claude-x"\n',
        [
            {
                "id": "a",
                "input": "q",
                "checks": [{"kind": "schema"}, {"kind": "user", "name": "short", "params": {"n": 3}}],
            }
        ],
        {
            "schema.json": json.dumps({"type": "object"}),
            "checks.py": "import evalkit\n\n@evalkit.check('short')\ndef short(value, case, n):\n    return len(str(value)) < n\n",
        },
    )
    suite = load_suite(root)
    assert suite.name == "demo" and suite.config.model.name == "claude-x"
    assert suite.user is not None and "short" in suite.user.checks
    assert suite.output_schema == {"type": "object"}


def test_suite_cross_checks(tmp_path: Path) -> None:
    root = _suite_dir(
        tmp_path,
        'name = "demo"\nbogus = 1\n',
        [{"id": "a", "input": "q", "checks": [{"kind": "user", "name": "nope"}, {"kind": "schema"}]}],
    )
    _, problems = validate_suite(root)
    text = "\n".join(map(str, problems))
    assert "suite.toml:2: bogus: unknown key" in text  # located by its line
    # config is broken, so the cross-checks are not reached: fix it and they are
    (root / "suite.toml").write_text('name = "demo"\n')
    _, problems = validate_suite(root)
    fields = {p.field for p in problems}
    assert fields == {"checks[0].name", "checks[1]"}


def test_bad_toml_is_located(tmp_path: Path) -> None:
    root = _suite_dir(
        tmp_path, 'name = "demo\n', [{"id": "a", "input": "q", "expected": "x", "grader": "exact"}]
    )
    _, problems = validate_suite(root)
    assert problems and problems[0].field == "(toml)" and problems[0].line == 1


def _row(i: int, expected: str) -> dict[str, object]:
    return {
        "id": f"c{i}",
        "input": {"q": f"question {i}"},
        "expected": expected,
        "grader": "exact",
        "slice": "s",
    }


@settings(max_examples=60, deadline=None)
@given(st.permutations(list(range(6))), st.booleans())
def test_version_ignores_line_order_key_order_and_whitespace(
    tmp_path_factory: pytest.TempPathFactory, order: list[int], spaced: bool
) -> None:
    rows = [_row(i, f"label{i}") for i in range(6)]
    tmp = tmp_path_factory.mktemp("v")
    a = write_jsonl(tmp / "a.jsonl", rows)
    shuffled = [dict(reversed(list(rows[i].items()))) for i in order]
    text = "".join(json.dumps(r, indent=2 if spaced else None).replace("\n", " ") + "\n" for r in shuffled)
    (tmp / "b.jsonl").write_text(text)
    assert load_suite(a).version == load_suite(tmp / "b.jsonl").version


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 5), st.sampled_from(["expected", "slice", "input", "split"]))
def test_version_changes_with_any_change_of_meaning(which: int, key: str) -> None:
    from evalkit.suite import Case

    rows = [_row(i, f"label{i}") for i in range(6)]
    cases = [parse_case(r)[0] for r in rows]
    assert all(cases)
    before = cases_version([c for c in cases if c is not None])
    changed = dict(rows[which])
    changed[key] = {"expected": "other", "slice": "t", "input": {"q": "changed"}, "split": "holdout"}[key]
    new_case = parse_case(changed)[0]
    assert isinstance(new_case, Case)
    after_cases = [new_case if i == which else c for i, c in enumerate(cases) if c is not None]
    assert cases_version(after_cases) != before


def test_version_ignores_notes_and_source() -> None:
    a = parse_case({**_row(1, "x"), "source": "one", "notes": "n"})[0]
    b = parse_case({**_row(1, "x"), "source": "two"})[0]
    assert a and b and cases_version([a]) == cases_version([b])


def test_save_keeps_the_order_is_atomic_and_round_trips(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [_row(3, "c"), _row(1, "a"), {**_row(2, "b"), "must": 1}])
    _, problems = validate_suite(path)
    assert problems  # the unknown key
    path = write_jsonl(
        tmp_path / "c.jsonl", [_row(3, "c"), _row(1, "a"), {**_row(2, "b"), "split": "holdout"}]
    )
    suite = load_suite(path)
    out = suite.save(tmp_path / "saved.jsonl")
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert ids == ["c3", "c1", "c2"]  # the file's order, so a diff shows only what changed
    assert out.read_text() == path.read_text()
    again = load_suite(out)
    assert again.version == suite.version
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_validate_warns_where_structured_output_will_not_enforce_the_schema(tmp_path: Path) -> None:
    from evalkit.suite import schema_warnings

    schema = {
        "type": "object",
        "properties": {
            "date": {"type": "string", "pattern": "^\\\\d{4}-\\\\d{2}-\\\\d{2}$"},
            "label": {"type": "string", "enum": ["a", "b"]},
            "items": {"type": "array", "items": {"type": "number"}, "minItems": 1},
        },
        "required": ["date"],
    }
    warnings = schema_warnings(schema, "schema.json")
    assert [(w.field, w.message.split(";")[0]) for w in warnings] == [
        ("properties/date", "structured output does not enforce pattern")
    ]
    broken = schema_warnings(
        {"type": "object", "properties": {"x": {"type": ["string", "null"]}}}, "schema.json"
    )
    assert len(broken) == 1 and "cannot take this schema" in broken[0].message and "anyOf" in broken[0].hint
    root = _suite_dir(
        tmp_path,
        'name = "demo"\noutput_schema = "schema.json"\n',
        [{"id": "a", "input": "q", "checks": [{"kind": "schema"}]}],
        {"schema.json": json.dumps(schema)},
    )
    suite = load_suite(root)
    assert [w.field for w in suite.warnings] == ["properties/date"]
