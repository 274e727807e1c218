"""Structured output: the output format the SDK sends for a pydantic model or a JSON Schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anthropic
import pydantic


def output_format_for(model_cls: type[Any]) -> dict[str, Any]:
    """The ``output_config.format`` that ``messages.parse(output_format=model_cls)`` sends."""
    schema = pydantic.TypeAdapter(model_cls).json_schema()
    return {"schema": anthropic.transform_schema(schema), "type": "json_schema"}


def json_schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``output_config.format`` for a plain JSON Schema (a suite's schema.json), made strict like the SDK's."""
    # $schema/$id are metadata the API has no use for; the transform would fold them into the description
    plain = {k: v for k, v in schema.items() if k not in ("$schema", "$id")}
    return {"schema": anthropic.transform_schema(plain), "type": "json_schema"}


def structured_request(request: Mapping[str, Any], model_cls: type[Any]) -> dict[str, Any]:
    """``request`` with the output format the SDK sends for ``messages.parse(output_format=model_cls)``.

    The SDK puts a strict JSON schema (``anthropic.transform_schema`` of the pydantic schema) at
    ``output_config.format``; other ``output_config`` keys (``effort``) are kept.
    """
    out = dict(request)
    config = request.get("output_config")
    out["output_config"] = {
        **(dict(config) if isinstance(config, Mapping) else {}),
        "format": output_format_for(model_cls),
    }
    return out
