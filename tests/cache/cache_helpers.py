"""Requests, responses and helpers shared by the response-cache tests."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from evalkit._cache import (
    ResponseCache,
    cache_key,
)

ENDPOINT = "messages"
SECRET = "sk-ant-api03-DO-NOT-STORE-0123456789"


def make_request(**overrides: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "system": "You are a support triage assistant. Answer with one label.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "My invoice is wrong"}]}],
        "temperature": 0.0,
        "output_config": {
            "format": {
                "type": "json_schema",
                "schema": {"type": "object", "properties": {"label": {"type": "string"}}},
            }
        },
    }
    request.update(overrides)
    return request


def make_response(text: str = '{"label": "billing"}') -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 120, "output_tokens": 8},
    }


META = {"input_tokens": 120, "output_tokens": 8, "cost_usd": 0.0005}


def store(cache: ResponseCache, request: dict[str, Any] | None = None, repeat: int = 0, **kw: Any) -> str:
    request = make_request() if request is None else request
    key = cache_key(ENDPOINT, request, repeat)
    cache.put(key, ENDPOINT, request, repeat, kw.get("response", make_response()), kw.get("meta", META))
    return key


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def _backdate(cache: ResponseCache, key: str, days: float, now: datetime) -> None:
    path = cache.path_for(key)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["meta"]["created_at"] = (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from evalkit.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse rejects bad input with exit 2
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _deny(monkeypatch: pytest.MonkeyPatch, name: str, denied: set[Path]) -> None:
    """Make os.<name> (as the cache's modules call it) fail with EACCES for the given paths."""
    real = getattr(os, name)

    def guarded(path: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(path) in denied:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, name, guarded)


# Keys computed before secret stripping was narrowed and ints were read as floats: committed caches hold these
# files, so they must never change (or CACHE_FORMAT_VERSION must be bumped, deliberately).
PINNED_REQUESTS: dict[str, dict[str, Any]] = {
    "system": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "You triage support tickets.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "My invoice is wrong"}]}],
        "temperature": 0.0,
        "top_p": 0.9,
        "output_config": {
            "format": {
                "type": "json_schema",
                "schema": {
                    "type": "object",
                    "properties": {"label": {"type": "string", "enum": ["billing", "account"]}},
                    "required": ["label"],
                    "additionalProperties": False,
                },
            }
        },
    },
    "tools": {
        "model": "claude-haiku-4-5",
        "max_tokens": 2048,
        "system": [{"type": "text", "text": "Use the tools."}],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [
            {
                "name": "lookup",
                "description": "Find an order",
                "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            }
        ],
        "tool_choice": {"type": "auto"},
        "messages": [
            {"role": "user", "content": "Where is order 42?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"order_id": "42"}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "shipped"}],
            },
        ],
        "metadata": {"user_id": "u-1"},
        "stop_sequences": ["END"],
        "top_k": 5,
    },
    "judge": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "system": "You grade.",
        "messages": [{"role": "user", "content": "grade this"}],
        "temperature": 1.0,
    },
}
PINNED_KEYS = {
    ("system", 0): "a06f90ff2c1e0b9b0727440e746671de50676be5077d0442223a2bf00d73007c",
    ("system", 2): "d80a47bcbe9048cb20bcb6b2e07cc87046af233326850a2c41340ae6e39a370d",
    ("tools", 0): "3fab97661de2b02a99073447c1055d151d3eaca20b1f8658fbb5885f5ca9b890",
    ("tools", 2): "ebc2eb534eaf22c3f116d45ad92cdd909ccc844510e9a741735b23cbcd41d938",
    ("judge", 0): "4073c05a7bf44f4db3f7652ba856bc083d5a39795846f41cdba47bcda0946a21",
    ("judge", 2): "f366da11828dec0ed527ae1dd2b03047807aab315f591aac7bf066cf4ac7fcae",
}
