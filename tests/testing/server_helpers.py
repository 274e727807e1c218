"""Helpers shared by the local server's tests: SDK clients against it, requests, schemas."""

from __future__ import annotations

import http.client
from collections.abc import Callable
from typing import Any, Literal

import anthropic
import pydantic

from evalkit.testing import LocalAnthropicServer

API_KEY = "sk-ant-test-server-0123456789abcdef"
MODEL = "claude-haiku-4-5"
MakeServer = Callable[..., LocalAnthropicServer]


_open_clients: list[anthropic.Anthropic] = []


def sdk(server: LocalAnthropicServer, **kwargs: Any) -> anthropic.Anthropic:
    kwargs.setdefault("max_retries", 0)
    return track(anthropic.Anthropic(base_url=server.base_url, api_key=API_KEY, **kwargs))


def track(client: anthropic.Anthropic) -> anthropic.Anthropic:
    """Close this SDK client after the test."""
    _open_clients.append(client)
    return client


def close_clients() -> None:
    """Close the SDK clients made since the last call."""
    while _open_clients:
        _open_clients.pop().close()


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 256, "messages": [{"role": "user", "content": text}], **extra}


def first_text(message: Any) -> str:
    block = message.content[0]
    assert block.type == "text"
    return str(block.text)


def raw_request(
    server: LocalAnthropicServer, method: str, path: str, body: bytes | None, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


class Verdict(pydantic.BaseModel):
    label: Literal["billing", "account", "shipping"]
    confidence: float
    reasons: list[str]


class Address(pydantic.BaseModel):
    city: str
    postcode: str | None = None


class Order(pydantic.BaseModel):
    order_id: str
    quantity: int
    gift: bool
    ship_to: Address
    tags: list[str]
