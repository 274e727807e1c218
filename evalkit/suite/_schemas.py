"""JSON Schemas in a suite: reading an output_schema file, and where structured output will not enforce one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit.errors import Problem


def load_schema_file(path: Path) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Read and check a JSON Schema file; the schema, or the problems that stop it."""
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
