"""A small JSON value that follows a JSON schema: the default reply to a structured-output request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["example_from_schema"]

_FORMAT_EXAMPLES = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00",
    "duration": "P1D",
    "email": "user@example.com",
    "hostname": "example.com",
    "uri": "https://example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uuid": "00000000-0000-0000-0000-000000000000",
}


def example_from_schema(
    schema: Mapping[str, Any], _root: Mapping[str, Any] | None = None, _depth: int = 0
) -> Any:
    """A small JSON value that follows ``schema`` (the first enum value, every property, ...).

    Used as the default reply to a structured-output request, so that offline runs get parseable
    output. Constraints that the SDK moves into descriptions (minimum, pattern, ...) are not honoured.
    """
    root = _root if _root is not None else schema
    if _depth > 32:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return example_from_schema(target, root, _depth + 1)
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf", "allOf"):
        variants = schema.get(key)
        if isinstance(variants, list) and variants:
            non_null = [v for v in variants if isinstance(v, dict) and v.get("type") != "null"]
            return example_from_schema((non_null or variants)[0], root, _depth + 1)
    type_ = schema.get("type")
    if isinstance(type_, list):
        type_ = next((t for t in type_ if t != "null"), "null")
    if type_ == "object" or (type_ is None and "properties" in schema):
        props = schema.get("properties") or {}
        return {name: example_from_schema(sub, root, _depth + 1) for name, sub in props.items()}
    if type_ == "array":
        items = schema.get("items")
        if isinstance(items, dict) and int(schema.get("minItems", 0) or 0) > 0:
            return [example_from_schema(items, root, _depth + 1)]
        return []
    if type_ == "string":
        return _FORMAT_EXAMPLES.get(str(schema.get("format", "")), "example")
    if type_ == "integer":
        return 1
    if type_ == "number":
        return 1.0
    if type_ == "boolean":
        return False
    return None
