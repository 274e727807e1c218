"""Systems under test: a suite's Claude prompt, or a Python function (the suite's baseline or module:function)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.hashing import content_hash, sha256_hex
from evalkit.suite import Suite


class SystemError_(EvalkitError):
    """A system could not be found or loaded."""


def render_user_turn(case_input: Any) -> str:
    """The user turn for a case: each key of an object input as <key>...</key>, a string as it is."""
    if isinstance(case_input, str):
        return case_input
    if isinstance(case_input, dict):
        parts = []
        for key, value in case_input.items():
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
            parts.append(f"<{key}>\n{text}\n</{key}>")
        return "\n".join(parts)
    return json.dumps(case_input, ensure_ascii=False, indent=2)


def structured_output_config(schema: dict[str, Any]) -> dict[str, Any]:
    """The request field asking Claude to answer with JSON matching `schema` (made strict as the SDK does)."""
    from evalkit.client import json_schema_format

    return {"format": json_schema_format(schema)}


@dataclass
class PythonSystem:
    """A plain function `predict(input) -> output`: a baseline, or your own pipeline."""

    name: str
    fn: Callable[[Any], Any]
    origin: str
    code_hash: str | None = None
    free: bool = False  # a local baseline makes no paid calls: its cost is a known zero, not an unknown

    model: str | None = None

    def describe(self) -> dict[str, Any]:
        return {"kind": "python", "name": self.name, "origin": self.origin, "code_hash": self.code_hash}


@dataclass
class ClaudeSystem:
    """A suite's prompt.md as the system prompt, its model settings, and its output schema if it has one."""

    prompt: str
    model: str
    max_tokens: int = 1024
    temperature: float | None = 0.0
    top_p: float | None = None
    thinking_budget: int | None = None
    output_schema: dict[str, Any] | None = None
    name: str = "claude"
    prompt_path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt_hash(self) -> str:
        return sha256_hex(self.prompt)[:12]

    def build_request(self, case_input: Any) -> dict[str, Any]:
        """The plain-JSON messages.create arguments for one case: what the cache key hashes."""
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.prompt,
            "messages": [{"role": "user", "content": render_user_turn(case_input)}],
        }
        if self.temperature is not None and self.thinking_budget is None:
            request["temperature"] = self.temperature
        if self.top_p is not None:
            request["top_p"] = self.top_p
        if self.thinking_budget is not None:
            request["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        if self.output_schema is not None:
            request["output_config"] = structured_output_config(self.output_schema)
        return request | self.extra

    def parse_output(self, text: str, parsed_json: Any = None) -> Any:
        """The system's output: the structured JSON when a schema was asked for, else the stripped text."""
        if self.output_schema is None:
            return text.strip()
        if parsed_json is not None:
            return parsed_json
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text.strip()  # graded as is: a schema check will say why it fails

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "claude",
            "name": self.name,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "thinking_budget": self.thinking_budget,
            "prompt_path": self.prompt_path,
            "prompt_hash": self.prompt_hash,
            "output_schema_hash": content_hash(self.output_schema) if self.output_schema else None,
        }


System = PythonSystem | ClaudeSystem


def _load_file_function(path: Path, func: str) -> Callable[[Any], Any]:
    mod_name = f"evalkit_system_{path.stem}_{sha256_hex(str(path.resolve()))[:10]}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise SystemError_(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(mod_name, None)
        raise SystemError_(f"{path} failed to import: {type(exc).__name__}: {exc}") from exc
    fn = getattr(module, func, None)
    if not callable(fn):
        raise SystemError_(f"{path} has no function {func!r}; define `def {func}(input): ...`")
    return fn


def load_system(spec: str, suite: Suite) -> System:
    """Resolve `baseline`, `claude`, `path/to/file.py:function` or `package.module:function`."""
    if spec == "baseline":
        path = suite.resolve(suite.config.baseline)
        if not path.exists():
            raise SystemError_(
                f"suite {suite.name} has no baseline ({path} not found); use --system claude or module:function"
            )
        return PythonSystem(
            "baseline", _load_file_function(path, "predict"), str(path), _file_hash(path), free=True
        )
    if spec == "claude":
        path = suite.resolve(suite.config.prompt)
        if not path.exists():
            raise SystemError_(
                f"suite {suite.name} has no prompt ({path} not found); write the system prompt there"
            )
        m = suite.config.model
        return ClaudeSystem(
            prompt=path.read_text(encoding="utf-8"),
            model=m.name,
            max_tokens=m.max_tokens,
            temperature=m.temperature,
            top_p=m.top_p,
            thinking_budget=m.thinking_budget,
            output_schema=suite.output_schema,
            prompt_path=str(path),
        )
    if ":" not in spec:
        raise SystemError_(f"unknown system {spec!r}: use baseline, claude, or module:function")
    target, func = spec.rsplit(":", 1)
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_absolute() and not path.exists():
            path = suite.resolve(target)
        if not path.exists():
            raise SystemError_(f"system file {target!r} not found")
        return PythonSystem(spec, _load_file_function(path, func), str(path), _file_hash(path))
    try:
        module = importlib.import_module(target)
    except ImportError as exc:
        raise SystemError_(f"cannot import module {target!r} for system {spec!r}: {exc}") from exc
    fn = getattr(module, func, None)
    if not callable(fn):
        raise SystemError_(f"module {target!r} has no function {func!r}")
    return PythonSystem(spec, fn, spec)


def _file_hash(path: Path) -> str:
    return sha256_hex(path.read_text(encoding="utf-8"))[:12]
