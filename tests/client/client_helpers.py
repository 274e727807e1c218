"""Requests, models and client helpers shared by the client tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import pydantic

from evalkit._client import (
    Client,
)
from evalkit.testing import LocalAnthropicServer

API_KEY = "sk-ant-test-client-fedcba9876543210"
MODEL = "claude-haiku-4-5"
MakeServer = Callable[..., LocalAnthropicServer]


class Ticket(pydantic.BaseModel):
    label: Literal["billing", "account", "shipping"]
    priority: int
    summary: str


TICKET = {"label": "billing", "priority": 2, "summary": "Charged twice"}


def ask(text: str = "My card was charged twice.", **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 200, "messages": [{"role": "user", "content": text}], **extra}


_open_clients: list[Client] = []


def client_for(server: LocalAnthropicServer, **kwargs: Any) -> Client:
    client = Client(api_key=API_KEY, base_url=server.base_url, **kwargs)
    _open_clients.append(client)
    return client
