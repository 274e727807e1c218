"""Canonical JSON and short content hashes, shared by suites, caches, labels and results."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: equal meaning, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(value: Any, length: int = 12) -> str:
    """A short hash of a JSON value's canonical form."""
    return sha256_hex(canonical_json(value))[:length]


def output_hash(output: Any) -> str:
    """The hash a label or a result records for the output it judges (16 hex digits)."""
    return content_hash(output, 16)
