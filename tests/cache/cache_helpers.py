"""Requests, responses and helpers shared by the response-cache tests."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from evalkit.cache import (
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
