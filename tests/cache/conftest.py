"""Fixtures of the response-cache tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from cache_helpers import _backdate, make_request, store

from evalkit._cache import (
    ResponseCache,
)


@pytest.fixture
def cache(tmp_path: Path) -> ResponseCache:
    return ResponseCache(tmp_path / "cache")


@pytest.fixture
def populated(cache: ResponseCache) -> tuple[ResponseCache, dict[str, str], datetime]:
    now = datetime(2025, 6, 1, tzinfo=UTC)
    keys = {
        "old": store(cache, make_request(temperature=0.1)),
        "mid": store(cache, make_request(temperature=0.2, model="claude-haiku-4-5")),
        "new": store(cache, make_request(temperature=0.3)),
    }
    _backdate(cache, keys["old"], 90, now)
    _backdate(cache, keys["mid"], 20, now)
    _backdate(cache, keys["new"], 1, now)
    return cache, keys, now


@pytest.fixture(autouse=True)
def _default_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys are computed for the default API endpoint unless a test names another server."""
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
