"""Suite settings: suite.toml's keys (the model, the judge) and reading it with each key's line."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalkit._records import strip_bom
from evalkit.errors import Problem

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
    min_kappa: float | None = Field(default=None, ge=-1, le=1)

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
    # seconds one check may take (a regex, a user check, a candidate SQL query); 0 = no limit, and user code
    # (checks.py and its checks) then runs in this process
    check_timeout_s: float = Field(default=5.0, ge=0, allow_inf_nan=False)
    # mark each request's stable prefix (system prompt, tools) for the API's prompt cache: on, off, 5m or 1h
    prompt_cache: Literal["on", "off", "5m", "1h"] = "on"
    # tools the claude system offers (Anthropic tool definitions, a JSON list); default tools.json when there
    tools: str | None = None
    # model turns a tool-using case may take before it must have answered
    max_turns: int = Field(default=8, ge=1, le=50)
    model: ModelSettings = Field(default_factory=ModelSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)


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


@dataclass
class ConfigRead:
    """suite.toml once read: the config (None if unusable), its problems and the line of each key."""

    config: SuiteConfig | None
    problems: list[Problem] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)


def read_config(root: Path) -> ConfigRead:
    """Read and check `root/suite.toml`; a missing file gives the defaults."""
    toml_path = root / "suite.toml"
    if not toml_path.exists():
        return ConfigRead(SuiteConfig(name=root.name))
    shown = str(toml_path)
    text = strip_bom(toml_path.read_text(encoding="utf-8"))  # what Windows editors write
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        return ConfigRead(None, [Problem(shown, line, "(toml)", f"invalid TOML: {exc}", "fix the syntax")])
    data.setdefault("name", root.name)
    try:
        config = SuiteConfig.model_validate(data)
    except ValidationError as exc:
        return ConfigRead(None, _config_problems(exc, shown, _toml_key_lines(text)))
    lines = _toml_key_lines(text)
    problems = [
        Problem(shown, lines.get(fld, lines.get(fld.split(".")[0])), fld, message, hint)
        for fld, message, hint in _settings_problems(data, config)
    ]
    return ConfigRead(config, problems, lines)
