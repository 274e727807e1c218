"""Fixtures of the client tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from client_helpers import _open_clients

from evalkit._client import _pricing as pricing


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No ambient credentials or price file; clients made by the test are closed after it."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", pricing.PRICES_ENV_VAR):
        monkeypatch.delenv(name, raising=False)
    yield
    while _open_clients:
        _open_clients.pop().close()
