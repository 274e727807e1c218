"""pytest fixtures for the local Anthropic-compatible server.

Load them with ``pytest_plugins = ["evalkit.testing.fixtures"]`` in a ``conftest.py``:

- ``anthropic_server``: a started ``LocalAnthropicServer`` with default replies, stopped after the test;
- ``make_anthropic_server``: a factory taking the server's arguments (responder, rules, faults, latency,
  ...) and returning a started server; every server it made is stopped after the test;
- ``anthropic_env``: ``anthropic_server`` with ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` pointing at it
  for the test's duration, for code that builds its client from the environment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from evalkit.testing.server import LocalAnthropicServer

__all__ = ["TEST_API_KEY", "anthropic_env", "anthropic_server", "make_anthropic_server"]

TEST_API_KEY = "sk-ant-local-test-key"
"""The key ``anthropic_env`` puts in ``ANTHROPIC_API_KEY`` (any non-empty key is accepted by default)."""


@pytest.fixture
def anthropic_server() -> Iterator[LocalAnthropicServer]:
    """A running local server with default replies, for one test."""
    with LocalAnthropicServer() as server:
        yield server


@pytest.fixture
def make_anthropic_server() -> Iterator[Callable[..., LocalAnthropicServer]]:
    """``make_anthropic_server(responder=None, **kwargs)``: start a server built with these arguments."""
    servers: list[LocalAnthropicServer] = []

    def factory(*args: Any, **kwargs: Any) -> LocalAnthropicServer:
        server = LocalAnthropicServer(*args, **kwargs).start()
        servers.append(server)
        return server

    yield factory
    for server in servers:
        server.stop()


@pytest.fixture
def anthropic_env(
    anthropic_server: LocalAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> LocalAnthropicServer:
    """The local server, with ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` set to use it."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_API_KEY)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    return anthropic_server
