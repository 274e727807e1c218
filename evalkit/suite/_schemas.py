"""JSON Schemas in a suite: reading an output_schema file, and where structured output will not enforce one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit.errors import Problem, RemoteSchemaRefused


def load_schema_file(path: Path) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Read and check a JSON Schema file; the schema, or the problems that stop it."""
    shown = str(path)
    if not path.exists():
        return None, [Problem(shown, None, "output_schema", "file not found", "fix the path in suite.toml")]
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return None, [Problem(shown, exc.lineno, "(json)", f"invalid JSON: {exc.msg}", "")]
    problems = [
        Problem(shown, None, where, message, hint) for where, message, hint in schema_problems(schema)
    ]
    return (None, problems) if problems else (schema, [])


UNSENDABLE_SCHEMA_HINT = "write a nullable field as anyOf [{type: X}, {type: null}] instead of a type list"


def unsendable_schema(schema: dict[str, Any]) -> str | None:
    """Why structured output cannot take `schema` (the SDK's strict form of it fails), or None if it can."""
    from evalkit._client import json_schema_format

    try:
        json_schema_format(schema)
    except Exception as exc:
        return f"structured output cannot take this schema ({type(exc).__name__}: {exc})"
    return None


def schema_warnings(schema: dict[str, Any], shown: str) -> list[Problem]:
    """Where Claude's structured output will not enforce the schema (the schema check still does)."""
    from evalkit._client import json_schema_format

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


def offline_registry() -> Any:
    """A jsonschema registry that refuses every remote retrieval: a grade never depends on the network."""
    from referencing import Registry

    def refuse(uri: str) -> Any:
        raise RemoteSchemaRefused(
            f"the schema refers to {uri!r}; schemas are never fetched: put it under $defs and use '#/$defs/...'"
        )

    return Registry(retrieve=refuse)  # type: ignore[call-arg]  # attrs-made init


def _refs(node: Any, path: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.append((f"{path}/$ref" if path else "$ref", ref))
        for key, value in node.items():
            if key not in ("enum", "const", "examples", "default"):
                found.extend(_refs(value, f"{path}/{key}" if path else str(key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found.extend(_refs(value, f"{path}/{i}"))
    return found


def schema_problems(schema: Any) -> list[tuple[str, str, str]]:
    """(where in the schema, what is wrong, what to do) for a schema that would fail or reach out when grading:
    not a valid JSON Schema, a $ref to a URL, a $ref that points nowhere, or a $ref that only leads to itself."""
    import jsonschema
    from referencing.exceptions import Unresolvable

    if not isinstance(schema, dict):
        return [("(schema)", f"a JSON Schema is an object, got {type(schema).__name__}", "write an object")]
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(map(str, exc.path)) or "(schema)"
        return [(where, f"not a valid JSON Schema: {exc.message}", "fix the schema (see json-schema.org)")]
    found: list[tuple[str, str, str]] = []
    from referencing import Resource
    from referencing.jsonschema import DRAFT202012

    root = Resource.from_contents(schema, default_specification=DRAFT202012)
    resolver = offline_registry().resolver_with_root(root)
    for where, ref in _refs(schema, ""):
        if not ref.startswith("#"):
            found.append(
                (
                    where,
                    f"$ref {ref!r} points outside the schema, and schemas are never fetched",
                    "copy the referenced schema under $defs and refer to it as '#/$defs/<name>'",
                )
            )
            continue
        seen = {ref}
        target: Any = None
        try:
            target = resolver.lookup(ref).contents
            while isinstance(target, dict) and set(target) <= {"$ref", "$comment"} and "$ref" in target:
                nxt = target["$ref"]
                if nxt in seen:
                    found.append(
                        (
                            where,
                            f"$ref {ref!r} only leads back to itself",
                            "give the referenced schema content",
                        )
                    )
                    break
                seen.add(nxt)
                target = resolver.lookup(nxt).contents
        except (Unresolvable, RemoteSchemaRefused):
            found.append((where, f"$ref {ref!r} points to nothing in the schema", "fix the pointer"))
    return found
