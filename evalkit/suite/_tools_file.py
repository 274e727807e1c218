"""tools.json: the tools a suite's claude system offers, as Anthropic tool definitions, checked with where."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from evalkit.errors import Problem

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_HINT = 'a tool is {"name": ..., "description": ..., "input_schema": {"type": "object", ...}} (docs/case-format.md)'


def load_tools_file(path: Path) -> tuple[list[dict[str, Any]] | None, list[Problem]]:
    """The tool definitions in `path` and every problem with them (file, tool index, field)."""
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, [
            Problem(shown, None, "(file)", "file not found", "fix tools in suite.toml, or add the file")
        ]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(shown, None, "(file)", f"unreadable ({exc})", "save it as UTF-8 JSON")]
    try:
        data = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        return None, [
            Problem(shown, line, "(file)", f"not JSON: {exc}", "write a JSON list of tool definitions")
        ]
    if not isinstance(data, list) or not data:
        return None, [Problem(shown, None, "(file)", "not a non-empty JSON list", _HINT)]
    problems: list[Problem] = []
    names: set[str] = set()
    for i, tool in enumerate(data):
        where = f"[{i}]"
        line = _line_of(text, tool.get("name") if isinstance(tool, dict) else None)
        if not isinstance(tool, dict):
            problems.append(Problem(shown, None, where, "a tool is a JSON object", _HINT))
            continue
        extra = sorted(set(tool) - {"name", "description", "input_schema", "cache_control", "type"})
        if extra:
            problems.append(Problem(shown, line, f"{where}", f"unknown key(s) {', '.join(extra)}", _HINT))
        name = tool.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            problems.append(
                Problem(
                    shown,
                    line,
                    f"{where}.name",
                    f"{name!r} is not a tool name",
                    "use 1-64 letters, digits, _ or -",
                )
            )
        elif name in names:
            problems.append(
                Problem(shown, line, f"{where}.name", f"{name} is defined twice", "give each tool once")
            )
        else:
            names.add(name)
        if not isinstance(tool.get("description", ""), str):
            problems.append(Problem(shown, line, f"{where}.description", "must be a string", _HINT))
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            problems.append(
                Problem(
                    shown, line, f"{where}.input_schema", 'must be a JSON Schema with "type": "object"', _HINT
                )
            )
            continue
        import jsonschema

        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            problems.append(
                Problem(shown, line, f"{where}.input_schema", f"not a JSON Schema: {exc.message}", _HINT)
            )
    return (data if not problems else None), problems


def _line_of(text: str, name: Any) -> int | None:
    """The line where the tool named `name` is defined (its "name" key), when it can be found."""
    if not isinstance(name, str):
        return None
    match = re.search(r'"name"\s*:\s*' + re.escape(json.dumps(name)), text)
    return text.count("\n", 0, match.start()) + 1 if match else None
