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

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalkit._fs import atomic_write_text
from evalkit.errors import EvalkitError, Problem, SuiteValidationError
from evalkit.suite._cases import Case, cases_to_jsonl, cases_version, read_cases
from evalkit.suite._checks import SchemaCheck, SqlRowsMatchCheck, UserCheck
from evalkit.suite._registry import UserModule, load_user_module

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_JUDGE_MODEL = "claude-opus-4-6"


def _unset_default_temperature(data: Any, alternatives: tuple[str, ...]) -> Any:
    """No temperature where the default one would not be sent: with top_p or with thinking, if none was given."""
    if (
        isinstance(data, dict)
        and "temperature" not in data
        and any(data.get(key) is not None for key in alternatives)
    ):
        return {**data, "temperature": None}
    return data


class ModelSettings(BaseModel):
    """How the system under test calls Claude."""

    model_config = ConfigDict(extra="forbid")

    name: str = DEFAULT_MODEL
    max_tokens: int = Field(default=1024, gt=0)
    temperature: float | None = Field(default=0.0, ge=0, le=1)
    top_p: float | None = Field(default=None, gt=0, le=1)
    thinking_budget: int | None = Field(default=None, ge=1024)

    @model_validator(mode="before")
    @classmethod
    def _temperature_only_when_sent(cls, data: Any) -> Any:
        # the API takes temperature or top_p, not both, and with thinking only its default temperature: the
        # default 0.0 is dropped then (an explicit temperature there is a validation problem, see below)
        return _unset_default_temperature(data, ("top_p", "thinking_budget"))


class JudgeSettings(BaseModel):
    """How the model judge calls Claude; pinned, and by default a different model from the system's."""

    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_JUDGE_MODEL
    max_tokens: int = Field(default=1024, gt=0)
    temperature: float | None = Field(default=0.0, ge=0, le=1)
    thinking_budget: int | None = Field(default=None, ge=1024)
    pass_rule: Literal["all", "majority"] = "all"

    @model_validator(mode="before")
    @classmethod
    def _temperature_only_when_sent(cls, data: Any) -> Any:
        return _unset_default_temperature(data, ("thinking_budget",))


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


def _config_problems(exc: ValidationError, shown: str, lines: dict[str, int] | None = None) -> list[Problem]:
    out = []
    for err in exc.errors(include_url=False):
        fld = ".".join(str(p) for p in err["loc"]) or "(file)"
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
        line = (lines or {}).get(fld, (lines or {}).get(fld.split(".")[0]))
        out.append(Problem(shown, line, fld, msg, "see docs/case-format.md for suite.toml keys"))
    return out


_TOML_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_TOML_HEADER = re.compile(rf"^\s*\[\[?\s*({_TOML_KEY_PART}(?:\s*\.\s*{_TOML_KEY_PART})*)\s*\]\]?\s*(?:#.*)?$")
_TOML_KEY = re.compile(rf"^\s*({_TOML_KEY_PART}(?:\s*\.\s*{_TOML_KEY_PART})*)\s*=")


def _key_parts(dotted: str) -> tuple[str, ...]:
    return tuple(part.strip("\"'") for part in re.findall(_TOML_KEY_PART, dotted))


def _toml_key_lines(text: str) -> dict[str, int]:
    """The 1-based line where each key of a TOML text is set: {"name": 1, "model": 8, "model.top_p": 10}.

    A table's own entry is its header line (or the first line that sets a key in it). Lines inside a multi-line
    string are skipped. A scan of the text, not a parse: only for locating problems.
    """
    found: dict[str, int] = {}
    table: tuple[str, ...] = ()
    closing: str | None = None  # the delimiter of the multi-line string we are in
    for number, line in enumerate(text.splitlines(), start=1):
        if closing is not None:
            if closing in line:
                closing = None
            continue
        header = _TOML_HEADER.match(line)
        if header:
            table = _key_parts(header.group(1))
            found.setdefault(".".join(table), number)
            continue
        key = _TOML_KEY.match(line)
        if not key:
            continue
        parts = table + _key_parts(key.group(1))
        for i in range(1, len(parts) + 1):
            found.setdefault(".".join(parts[:i]), number)
        rest = line[key.end() :]
        closing = next((q for q in ('"""', "'''") if rest.count(q) % 2 == 1), None)
    return found


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _settings_problems(data: dict[str, Any], config: SuiteConfig) -> list[tuple[str, str, str]]:
    """(field, message, hint) for settings the API would reject or silently not use."""
    found: list[tuple[str, str, str]] = []
    given = _table(data, "model")
    model = config.model
    if "temperature" in given and "top_p" in given:
        found.append(
            (
                "model.top_p",
                "set temperature or top_p, not both: current Claude models reject a request with both",
                "remove one of them from [model]; top_p alone sends no temperature",
            )
        )
    if "temperature" in given and model.thinking_budget is not None:
        found.append(
            (
                "model.temperature",
                "with thinking_budget set the API takes only its default temperature, so this one would not be sent",
                "remove temperature from [model], or remove thinking_budget",
            )
        )
    if model.thinking_budget is not None and model.top_p is not None and not 0.95 <= model.top_p <= 1:
        found.append(
            (
                "model.top_p",
                f"with thinking_budget set the API takes top_p only from 0.95 to 1, not {model.top_p}",
                "raise top_p to 0.95 or more, remove it, or remove thinking_budget",
            )
        )
    if model.thinking_budget is not None and model.thinking_budget >= model.max_tokens:
        default = "" if "max_tokens" in given else ", the default"
        found.append(
            (
                "model.thinking_budget",
                f"thinking_budget ({model.thinking_budget}) must be below max_tokens ({model.max_tokens}{default}): "
                "max_tokens caps the thinking and the answer together",
                f"raise model.max_tokens above the budget (e.g. max_tokens = {model.thinking_budget + 1024}), "
                "or lower thinking_budget",
            )
        )
    judge = _table(data, "judge")
    if "temperature" in judge and config.judge.thinking_budget is not None:
        found.append(
            (
                "judge.temperature",
                "with thinking_budget set the API takes only its default temperature, so this one would not be sent",
                "remove temperature from [judge], or remove thinking_budget",
            )
        )
    return found


def _model_id_warnings(config: SuiteConfig, shown: str, lines: dict[str, int]) -> list[Problem]:
    """An undated alias (name the dated id to pin), or an id nobody knows (its cost will be unknown)."""
    from evalkit.client import DEFAULT_PRICES, PINNED_IDS, current_prices, sdk_model_ids

    try:
        prices = current_prices()
    except EvalkitError:  # a broken EVALKIT_PRICES file is reported where prices are used
        prices = DEFAULT_PRICES
    out: list[Problem] = []
    for fld, name in (("model.name", config.model.name), ("judge.model", config.judge.model)):
        key = fld.split(".")[1]
        line = lines.get(fld)
        dated = PINNED_IDS.get(name)
        if dated:
            out.append(
                Problem(
                    shown,
                    line,
                    fld,
                    f"{name!r} is an undated alias: the snapshot behind it can change, and the results with it",
                    f'pin the dated id: {key} = "{dated[-1]}"',
                )
            )
        elif name not in prices and name not in sdk_model_ids():
            out.append(
                Problem(
                    shown,
                    line,
                    fld,
                    f"{name!r} is in neither the price table nor the anthropic SDK's model list: "
                    "its cost will be unknown",
                    "check the spelling; if the id is right, price it in a file named by EVALKIT_PRICES "
                    "(see evalkit/client/_pricing.py)",
                )
            )
    return out


@dataclass
class _ConfigRead:
    config: SuiteConfig | None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)


def _read_config(root: Path) -> _ConfigRead:
    toml_path = root / "suite.toml"
    if not toml_path.exists():
        return _ConfigRead(SuiteConfig(name=root.name))
    shown = str(toml_path)
    text = toml_path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        return _ConfigRead(None, [Problem(shown, line, "(toml)", f"invalid TOML: {exc}", "fix the syntax")])
    data.setdefault("name", root.name)
    try:
        config = SuiteConfig.model_validate(data)
    except ValidationError as exc:
        return _ConfigRead(None, _config_problems(exc, shown, _toml_key_lines(text)))
    lines = _toml_key_lines(text)
    problems = [
        Problem(shown, lines.get(fld, lines.get(fld.split(".")[0])), fld, message, hint)
        for fld, message, hint in _settings_problems(data, config)
    ]
    return _ConfigRead(config, problems, _model_id_warnings(config, shown, lines), lines)


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


UNSENDABLE_SCHEMA_HINT = "write a nullable field as anyOf [{type: X}, {type: null}] instead of a type list"


def unsendable_schema(schema: dict[str, Any]) -> str | None:
    """Why structured output cannot take `schema` (the SDK's strict form of it fails), or None if it can."""
    from evalkit.client import json_schema_format

    try:
        json_schema_format(schema)
    except Exception as exc:
        return f"structured output cannot take this schema ({type(exc).__name__}: {exc})"
    return None


def schema_warnings(schema: dict[str, Any], shown: str) -> list[Problem]:
    """Where Claude's structured output will not enforce the schema (the schema check still does)."""
    from evalkit.client import json_schema_format

    why = unsendable_schema(schema)
    if why is not None:
        return [Problem(shown, None, "(schema)", why, UNSENDABLE_SCHEMA_HINT)]
    strict = json_schema_format(schema)["schema"]
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


def _system_warnings(config: SuiteConfig, root: Path, toml_lines: dict[str, int]) -> list[Problem]:
    """What `evalkit run` without --system would stumble on, found without importing anything."""
    shown, line = str(root / "suite.toml"), toml_lines.get("default_system")
    found: list[Problem] = []
    prompt = root / config.prompt
    if prompt.exists() and not prompt.read_text(encoding="utf-8").strip():
        found.append(Problem(str(prompt), None, "(prompt)", "the prompt is empty", "write the system prompt"))
    spec = config.default_system
    if spec == "claude" and not prompt.exists():
        found.append(
            Problem(
                shown, line, "default_system", f"is claude, but {prompt} is not there", "write the prompt"
            )
        )
    elif spec == "baseline" and "default_system" in toml_lines and not (root / config.baseline).exists():
        found.append(
            Problem(
                shown,
                line,
                "default_system",
                f"is baseline, but {root / config.baseline} is not there",
                "add the file, or name another system",
            )
        )
    elif spec not in ("claude", "baseline"):
        target = spec.rsplit(":", 1)[0] if ":" in spec else ""
        if not target:
            found.append(
                Problem(
                    shown,
                    line,
                    "default_system",
                    f"{spec!r} is not a system",
                    "use baseline, claude, module:function or path/file.py:function",
                )
            )
        elif target.endswith(".py") and not (root / target).exists() and not Path(target).is_absolute():
            found.append(
                Problem(
                    shown,
                    line,
                    "default_system",
                    f"{root / target} is not there",
                    "fix the path (it is read from the suite's folder)",
                )
            )
    return found


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
        read = _read_config(p)
        config, problems, config_warnings, toml_lines = read.config, read.problems, read.warnings, read.lines
    elif p.suffix == ".jsonl" and p.exists():
        root, cases_file = None, p
        config, problems = SuiteConfig(name=p.stem), []
        config_warnings, toml_lines = [], {}
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
                Problem(
                    str(base / "suite.toml"),
                    toml_lines.get("checks"),
                    "checks",
                    "file not found",
                    "fix the path",
                )
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
    suite.warnings = list(config_warnings)
    if root is not None:
        suite.warnings.extend(_system_warnings(config, root, toml_lines))
    if schema is not None and config.output_schema and not problems:
        suite.warnings.extend(schema_warnings(schema, str(base / config.output_schema)))
    return (suite if not problems else None), problems


def load_suite(path: str | Path) -> Suite:
    """Load a valid suite, or raise SuiteValidationError carrying every problem."""
    suite, problems = validate_suite(path)
    if problems or suite is None:
        raise SuiteValidationError(problems)
    return suite
