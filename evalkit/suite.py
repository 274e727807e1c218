"""Suites: a folder `goldens/<name>/` (cases.jsonl + suite.toml) or a bare .jsonl file, loaded and validated."""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.cases import Case, cases_to_jsonl, cases_version, read_cases
from evalkit.checks import SchemaCheck, SqlRowsMatchCheck, UserCheck
from evalkit.errors import Problem, SuiteValidationError
from evalkit.fsutil import atomic_write_text
from evalkit.registry import UserModule, load_user_module

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_JUDGE_MODEL = "claude-opus-4-6"


class ModelSettings(BaseModel):
    """How the system under test calls Claude."""

    model_config = ConfigDict(extra="forbid")

    name: str = DEFAULT_MODEL
    max_tokens: int = Field(default=1024, gt=0)
    temperature: float | None = Field(default=0.0, ge=0, le=1)
    top_p: float | None = Field(default=None, gt=0, le=1)
    thinking_budget: int | None = Field(default=None, ge=1024)


class JudgeSettings(BaseModel):
    """How the model judge calls Claude; pinned, and by default a different model from the system's."""

    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_JUDGE_MODEL
    max_tokens: int = Field(default=1024, gt=0)
    temperature: float | None = Field(default=0.0, ge=0, le=1)
    thinking_budget: int | None = Field(default=None, ge=1024)
    pass_rule: Literal["all", "majority"] = "all"


class SuiteConfig(BaseModel):
    """The contents of suite.toml."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    default_system: str = "baseline"
    prompt: str = "prompt.md"
    baseline: str = "baseline.py"
    checks: str | None = None
    output_schema: str | None = None
    skip_judge_when: Literal["same_field", "any_failed"] = "same_field"
    model: ModelSettings = Field(default_factory=ModelSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)


@dataclass
class Suite:
    """A loaded, validated suite."""

    config: SuiteConfig
    cases: list[Case]
    cases_file: Path
    root: Path | None = None
    output_schema: dict[str, Any] | None = None
    user: UserModule | None = None
    lines: dict[str, int] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.config.name

    @cached_property
    def version(self) -> str:
        return cases_version(self.cases, extra=self.output_schema)

    @property
    def base_dir(self) -> Path:
        return self.root if self.root is not None else self.cases_file.parent

    def resolve(self, relative: str) -> Path:
        return self.base_dir / relative

    def slice_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(c.slice for c in self.cases).items()))

    def case(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError(case_id)

    def save(self, path: Path | None = None) -> Path:
        """Write the cases atomically in stable order (multi-check form)."""
        target = path or self.cases_file
        atomic_write_text(target, cases_to_jsonl(self.cases))
        return target


def _config_problems(exc: ValidationError, shown: str) -> list[Problem]:
    out = []
    for err in exc.errors(include_url=False):
        fld = ".".join(str(p) for p in err["loc"]) or "(file)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        out.append(Problem(shown, None, fld, msg, "see docs/case-format.md for suite.toml keys"))
    return out


def _read_config(root: Path) -> tuple[SuiteConfig | None, list[Problem]]:
    toml_path = root / "suite.toml"
    if not toml_path.exists():
        return SuiteConfig(name=root.name), []
    shown = str(toml_path)
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        return None, [Problem(shown, line, "(toml)", f"invalid TOML: {exc}", "fix the syntax")]
    data.setdefault("name", root.name)
    try:
        return SuiteConfig.model_validate(data), []
    except ValidationError as exc:
        return None, _config_problems(exc, shown)


def _load_schema(path: Path) -> tuple[dict[str, Any] | None, list[Problem]]:
    import jsonschema

    shown = str(path)
    if not path.exists():
        return None, [Problem(shown, None, "output_schema", "file not found", "fix the path in suite.toml")]
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return None, [Problem(shown, exc.lineno, "(json)", f"invalid JSON: {exc.msg}", "")]
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return None, [Problem(shown, None, "/".join(map(str, exc.path)) or "(schema)", exc.message, "")]
    return schema, []


def schema_warnings(schema: dict[str, Any], shown: str) -> list[Problem]:
    """Where Claude's structured output will not enforce the schema (the schema check still does)."""
    from evalkit.client import json_schema_format

    try:
        strict = json_schema_format(schema)["schema"]
    except Exception as exc:
        return [
            Problem(
                shown,
                None,
                "(schema)",
                f"structured output cannot take this schema ({type(exc).__name__}: {exc})",
                "write a nullable field as anyOf [{type: X}, {type: null}] instead of a type list",
            )
        ]
    found: list[Problem] = []

    def walk(original: Any, sent: Any, path: str) -> None:
        if isinstance(original, dict) and isinstance(sent, dict):
            ignore = {"$schema", "$id", "description"}
            if "enum" in sent or "const" in sent:
                ignore.add("type")  # the listed values already fix the type
            dropped = sorted(k for k in original if k not in sent and k not in ignore)
            if dropped:
                found.append(
                    Problem(
                        shown,
                        None,
                        path or "(root)",
                        f"structured output does not enforce {', '.join(dropped)}; the schema check still does",
                        "keep it if the check should catch it, or move the rule into the prompt",
                    )
                )
            for key, value in original.items():
                if key in sent:
                    walk(value, sent[key], f"{path}/{key}" if path else key)
        elif isinstance(original, list) and isinstance(sent, list):
            for i, (a, b) in enumerate(zip(original, sent, strict=False)):
                walk(a, b, f"{path}/{i}")

    walk(schema, strict, "")
    return found


def _cross_check(suite: Suite, lines: dict[str, int], shown: str, user_error: str | None) -> list[Problem]:
    problems: list[Problem] = []
    for case in suite.cases:
        line = lines.get(case.id)
        for i, chk in enumerate(case.checks):
            where = f"checks[{i}]"
            if isinstance(chk, UserCheck):
                if suite.user is None:
                    hint = (
                        user_error
                        or "set checks = 'checks.py' in suite.toml and register it with @evalkit.check"
                    )
                    problems.append(
                        Problem(shown, line, f"{where}.name", f"user check {chk.name!r} not found", hint)
                    )
                elif suite.user.lookup(chk.name) is None:
                    known = ", ".join(sorted(suite.user.checks)) or "none"
                    problems.append(
                        Problem(
                            shown,
                            line,
                            f"{where}.name",
                            f"user check {chk.name!r} is not registered (registered: {known})",
                            f"add @evalkit.check({chk.name!r}) in {suite.user.path.name}",
                        )
                    )
            elif isinstance(chk, SchemaCheck):
                if chk.model is not None:
                    obj = suite.user.model(chk.model) if suite.user else None
                    if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
                        problems.append(
                            Problem(
                                shown,
                                line,
                                f"{where}.model",
                                f"no pydantic model {chk.model!r} in the suite's checks file",
                                "define it in checks.py",
                            )
                        )
                elif chk.json_schema is None and suite.output_schema is None:
                    problems.append(
                        Problem(
                            shown,
                            line,
                            where,
                            "schema check with no schema",
                            "give 'schema' in the check or output_schema in suite.toml",
                        )
                    )
            elif isinstance(chk, SqlRowsMatchCheck) and not suite.resolve(chk.fixture).exists():
                problems.append(
                    Problem(
                        shown,
                        line,
                        f"{where}.fixture",
                        f"fixture {chk.fixture!r} not found",
                        f"paths are relative to {suite.base_dir}",
                    )
                )
    return problems


def validate_suite(path: str | Path) -> tuple[Suite | None, list[Problem]]:
    """Load a suite folder or .jsonl file and collect every problem; never raises for bad input."""
    p = Path(path)
    if p.is_dir():
        root: Path | None = p
        cases_file = p / "cases.jsonl"
        if not cases_file.exists():
            return None, [
                Problem(str(p), None, "(suite)", "no cases.jsonl in this folder", "add one case per line")
            ]
        config, problems = _read_config(p)
    elif p.suffix == ".jsonl" and p.exists():
        root, cases_file = None, p
        config, problems = SuiteConfig(name=p.stem), []
    else:
        hint = "give a suite folder (goldens/<name>/) or a .jsonl file"
        return None, [Problem(str(p), None, "(path)", "not found" if not p.exists() else "not a suite", hint)]

    shown = str(cases_file)
    numbered, case_problems = read_cases(cases_file, shown)
    problems.extend(case_problems)
    if config is None:
        return None, problems

    base = root if root is not None else cases_file.parent
    schema = None
    if config.output_schema:
        schema, found = _load_schema(base / config.output_schema)
        problems.extend(found)
    user = None
    user_error = None
    checks_rel = config.checks or (
        "checks.py" if (base / "checks.py").exists() and root is not None else None
    )
    if checks_rel:
        checks_path = base / checks_rel
        if not checks_path.exists():
            problems.append(
                Problem(str(base / "suite.toml"), None, "checks", "file not found", "fix the path")
            )
        else:
            try:
                user = load_user_module(checks_path)
            except Exception as exc:
                user_error = f"{checks_path.name} failed to import: {type(exc).__name__}: {exc}"
                problems.append(Problem(str(checks_path), None, "(import)", user_error, "fix the file"))

    lines = {c.id: n for n, c in numbered}
    suite = Suite(
        config=config,
        cases=[c for _, c in numbered],
        cases_file=cases_file,
        root=root,
        output_schema=schema,
        user=user,
        lines=lines,
    )
    problems.extend(_cross_check(suite, lines, shown, user_error))
    if schema is not None and config.output_schema and not problems:
        suite.warnings = schema_warnings(schema, str(base / config.output_schema))
    return (suite if not problems else None), problems


def load_suite(path: str | Path) -> Suite:
    """Load a valid suite, or raise SuiteValidationError carrying every problem."""
    suite, problems = validate_suite(path)
    if problems or suite is None:
        raise SuiteValidationError(problems)
    return suite
