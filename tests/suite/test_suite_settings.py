"""suite.toml's [model] and [judge] settings: what the API would reject or ignore is a located problem, model ids
that are not pinned are warnings, and the requests of suites that set none of it do not change."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalkit._systems import ClaudeSystem, load_system
from evalkit.cli import main
from evalkit.errors import Problem
from evalkit.suite import JudgeSettings, ModelSettings, SuiteConfig, validate_suite

ROOT = Path(__file__).resolve().parents[2]


def make_suite(tmp_path: Path, toml: str) -> Path:
    root = tmp_path / "s"
    root.mkdir(parents=True)
    (root / "suite.toml").write_text('name = "s"\n' + toml, encoding="utf-8")
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "a", "input": "q", "expected": "x", "grader": "exact"}) + "\n", encoding="utf-8"
    )
    (root / "prompt.md").write_text("Answer the question.", encoding="utf-8")
    return root


def problems_of(tmp_path: Path, toml: str) -> list[Problem]:
    suite, problems = validate_suite(make_suite(tmp_path, toml))
    assert suite is None and problems
    return problems


def request_of(tmp_path: Path, toml: str) -> dict[str, object]:
    suite, problems = validate_suite(make_suite(tmp_path, toml))
    assert suite is not None and not problems, problems
    system = load_system("claude", suite)
    assert isinstance(system, ClaudeSystem)
    return system.build_request("q")


# -- 1. temperature and top_p ---------------------------------------------------------------------------------


def test_top_p_alone_sends_no_temperature(tmp_path: Path) -> None:
    suite, problems = validate_suite(make_suite(tmp_path, "[model]\ntop_p = 0.9\n"))
    assert suite is not None and not problems
    system = load_system("claude", suite)
    assert isinstance(system, ClaudeSystem)
    request = system.build_request("q")
    assert request["top_p"] == 0.9 and "temperature" not in request
    assert system.describe()["temperature"] is None  # the manifest records what was sent


def test_temperature_and_top_p_both_set_is_a_located_problem(tmp_path: Path) -> None:
    problems = problems_of(tmp_path, "[model]\ntemperature = 0.5\ntop_p = 0.9\n")
    assert [(p.field, p.line) for p in problems] == [("model.top_p", 4)]
    assert "not both" in problems[0].message
    assert str(problems[0]).startswith(
        f"{tmp_path / 's' / 'suite.toml'}:4: model.top_p: set temperature or top_p"
    )


def test_requests_of_suites_that_set_neither_are_unchanged(tmp_path: Path) -> None:
    # committed caches are keyed by the request: a suite without top_p or thinking sends what it always sent
    request = request_of(tmp_path, '[model]\nname = "claude-sonnet-4-6"\nmax_tokens = 64\n')
    assert request == {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "system": "Answer the question.",
        "messages": [{"role": "user", "content": "q"}],
        "temperature": 0.0,
    }
    assert ModelSettings() == ModelSettings(temperature=0.0)
    assert SuiteConfig(name="x").model.temperature == 0.0 and JudgeSettings().temperature == 0.0


# -- 2. thinking_budget below max_tokens ----------------------------------------------------------------------


def test_thinking_budget_not_below_max_tokens_is_a_problem(tmp_path: Path) -> None:
    problems = problems_of(tmp_path, "[model]\nthinking_budget = 2048\n")
    assert [(p.field, p.line) for p in problems] == [("model.thinking_budget", 3)]
    text = str(problems[0])
    assert "thinking_budget (2048) must be below max_tokens (1024" in text
    assert "raise model.max_tokens above the budget" in text
    # not silently changed: with room for the answer it is sent as written, with no temperature
    request = request_of(tmp_path / "ok", "[model]\nmax_tokens = 4096\nthinking_budget = 2048\n")
    assert request["max_tokens"] == 4096 and "temperature" not in request
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048}


# -- 3. temperature with thinking -----------------------------------------------------------------------------


def test_explicit_temperature_with_thinking_is_a_problem(tmp_path: Path) -> None:
    problems = problems_of(
        tmp_path, "[model]\nmax_tokens = 4096\ntemperature = 0.7\nthinking_budget = 2048\n"
    )
    assert [(p.field, p.line) for p in problems] == [("model.temperature", 4)]
    assert "thinking_budget" in problems[0].message and "remove temperature" in problems[0].hint
    judge = problems_of(tmp_path / "j", "[judge]\ntemperature = 0.0\nthinking_budget = 2048\n")
    assert [(p.field, p.line) for p in judge] == [("judge.temperature", 3)]


def test_describe_claims_no_temperature_that_is_not_sent() -> None:
    system = ClaudeSystem(
        prompt="p", model="claude-sonnet-4-6", max_tokens=4096, temperature=0.7, thinking_budget=2048
    )
    assert "temperature" not in system.build_request("q")
    assert system.describe()["temperature"] is None
    plain = ClaudeSystem(prompt="p", model="claude-sonnet-4-6", temperature=0.7)
    assert plain.build_request("q")["temperature"] == plain.describe()["temperature"] == 0.7


# -- 4. model ids ---------------------------------------------------------------------------------------------


def test_undated_alias_is_a_warning_naming_the_dated_id(tmp_path: Path) -> None:
    root = make_suite(tmp_path, '[model]\nname = "claude-sonnet-4-5"\n[judge]\nmodel = "claude-haiku-4-5"\n')
    suite, problems = validate_suite(root)
    assert suite is not None and not problems  # a warning, not an error
    assert [(w.field, w.line) for w in suite.warnings] == [("model.name", 3), ("judge.model", 5)]
    assert 'name = "claude-sonnet-4-5-20250929"' in suite.warnings[0].hint
    assert 'model = "claude-haiku-4-5-20251001"' in suite.warnings[1].hint


def test_unknown_model_id_warns_that_its_cost_will_be_unknown(tmp_path: Path) -> None:
    suite, problems = validate_suite(make_suite(tmp_path, '[model]\nname = "claude-sonet-4-6"\n'))
    assert suite is not None and not problems
    assert [(w.field, w.line) for w in suite.warnings] == [("model.name", 3)]
    assert "cost will be unknown" in suite.warnings[0].message


@pytest.mark.parametrize("name", ["claude-sonnet-4-6", "claude-sonnet-4-5-20250929", "claude-opus-4-7"])
def test_pinned_or_known_ids_give_no_warning(tmp_path: Path, name: str) -> None:
    suite, _ = validate_suite(make_suite(tmp_path, f'[model]\nname = "{name}"\n'))
    assert suite is not None and suite.warnings == []


def test_validate_prints_the_warning_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_suite(tmp_path, '[model]\nname = "claude-sonnet-4-5"\n')
    assert main(["validate", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"warning: {root / 'suite.toml'}:3: model.name: 'claude-sonnet-4-5' is an undated alias" in out


def test_shipped_goldens_validate_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ROOT / "goldens")]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.out and captured.err == ""


# -- 5. line numbers ------------------------------------------------------------------------------------------


def test_toml_key_lines() -> None:
    from evalkit.suite._settings import _toml_key_lines

    text = (
        'name = "s"\n'
        'description = """\n'
        "top_p = not a key, inside a string\n"
        '"""\n'
        "model.max_tokens = 10\n"
        "\n"
        "[ judge ]  # the judge\n"
        "model = 'x'\n"
        '"pass_rule" = "all"\n'
        "[model]\n"
        "top_p = 0.9\n"
    )
    lines = _toml_key_lines(text)
    assert lines == {
        "name": 1,
        "description": 2,
        "model": 5,
        "model.max_tokens": 5,
        "judge": 7,
        "judge.model": 8,
        "judge.pass_rule": 9,
        "model.top_p": 11,
    }


def test_a_missing_checks_file_is_located(tmp_path: Path) -> None:
    problems = problems_of(tmp_path, 'checks = "nope.py"\n')
    assert [(p.field, p.line) for p in problems] == [("checks", 2)]


# -- 6. the docs ----------------------------------------------------------------------------------------------


def test_docs_list_every_suite_toml_key() -> None:
    docs = (ROOT / "docs" / "case-format.md").read_text(encoding="utf-8")
    section = docs[docs.index("## suite.toml") :]
    top, model_part = section.split("**`[model]`**")
    model_part, judge_part = model_part.split("**`[judge]`**")
    for part, settings, tables in [
        (top, SuiteConfig, {"model", "judge"}),
        (model_part, ModelSettings, set()),
        (judge_part, JudgeSettings, set()),
    ]:
        documented = set(re.findall(r"^\| `(\w+)` \|", part, flags=re.MULTILINE))
        missing = set(settings.model_fields) - tables - documented
        assert not missing, (settings.__name__, missing)


def _claude_suite(tmp_path: Path, prompt: str, schema: str | None = None, default: str | None = None) -> Path:
    root = tmp_path / "s"
    root.mkdir()
    (root / "cases.jsonl").write_text('{"id": "a", "input": "x", "expected": "y", "grader": "exact"}\n')
    toml = 'name = "s"\n' + (f'default_system = "{default}"\n' if default else "")
    if schema is not None:
        (root / "schema.json").write_text(schema)
        toml += 'output_schema = "schema.json"\n'
    (root / "suite.toml").write_text(toml)
    (root / "prompt.md").write_text(prompt)
    return root


def test_an_empty_prompt_is_refused_for_claude_and_warned_of_by_validate(tmp_path: Path) -> None:
    from evalkit._systems import load_system
    from evalkit.errors import SystemLoadError
    from evalkit.suite import load_suite

    suite = load_suite(_claude_suite(tmp_path, "  \n"))
    with pytest.raises(SystemLoadError, match=r"prompt .* is empty"):
        load_system("claude", suite)
    assert any(w.message == "the prompt is empty" for w in suite.warnings)


def test_a_schema_structured_output_cannot_take_is_refused_when_the_claude_system_loads(
    tmp_path: Path,
) -> None:
    from evalkit._systems import load_system
    from evalkit.errors import SystemLoadError
    from evalkit.suite import load_suite

    schema = '{"type": "object", "properties": {"a": {"type": ["string", "null"]}}}'
    suite = load_suite(_claude_suite(tmp_path, "Answer.", schema=schema))
    with pytest.raises(SystemLoadError, match=r"cannot be sent as structured output.*anyOf"):
        load_system("claude", suite)


def test_a_default_system_that_cannot_run_is_warned_of(tmp_path: Path) -> None:
    from evalkit.suite import load_suite

    suite = load_suite(_claude_suite(tmp_path, "Answer.", default="pipline.py:predict"))
    (warning,) = [w for w in suite.warnings if w.field == "default_system"]
    assert "pipline.py is not there" in warning.message and warning.line == 2


def test_top_p_below_095_with_thinking_is_a_problem(tmp_path: Path) -> None:
    from evalkit.suite import validate_suite

    root = tmp_path / "s"
    root.mkdir()
    (root / "cases.jsonl").write_text('{"id": "a", "input": "x", "expected": "y", "grader": "exact"}\n')
    base = 'name = "s"\n[model]\nname = "claude-sonnet-4-5-20250929"\nmax_tokens = 4096\nthinking_budget = 2048\n'
    (root / "suite.toml").write_text(base + "top_p = 0.9\n")
    _, problems = validate_suite(root)
    assert [(p.field, p.line) for p in problems] == [("model.top_p", 6)]
    assert "from 0.95 to 1" in problems[0].message
    (root / "suite.toml").write_text(base + "top_p = 0.95\n")
    assert validate_suite(root)[1] == []
