"""A small JSON value that follows a JSON schema: the default reply to a structured-output request."""

from __future__ import annotations

import math
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
    output. ``minItems``, ``minLength``/``maxLength`` and numeric bounds are honoured when the schema keeps them;
    ``pattern`` is not.
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
        n_items = int(schema.get("minItems", 0) or 0)
        if isinstance(items, dict) and n_items > 0:
            return [example_from_schema(items, root, _depth + 1) for _ in range(n_items)]
        return []
    if type_ == "string":
        text = _FORMAT_EXAMPLES.get(str(schema.get("format", "")), "example")
        min_length, max_length = schema.get("minLength"), schema.get("maxLength")
        if isinstance(min_length, int) and len(text) < min_length:
            text = (text * (min_length // len(text) + 1))[:min_length]
        if isinstance(max_length, int) and len(text) > max_length:
            text = text[:max_length]
        return text
    if type_ in ("integer", "number"):
        return _number_in_bounds(schema, integer=type_ == "integer")
    if type_ == "boolean":
        return False
    return None


def _number_in_bounds(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    """1 (or 1.0), moved inside the schema's bounds when it has them."""
    value: float = 1
    low, high = schema.get("minimum"), schema.get("maximum")
    ex_low, ex_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    step = 1 if integer else 0.5
    if isinstance(low, int | float) and value < low:
        value = low
    if isinstance(ex_low, int | float) and value <= ex_low:
        value = ex_low + step
    if isinstance(high, int | float) and value > high:
        value = high
    if isinstance(ex_high, int | float) and value >= ex_high:
        value = ex_high - step
    if integer:
        return math.ceil(value)
    return float(value)
