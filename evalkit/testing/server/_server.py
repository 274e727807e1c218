"""A local Anthropic-compatible HTTP server for tests, benchmarks and offline suite development.

The server speaks enough of the Messages API for the official SDK to work against it unchanged:

- ``POST /v1/messages`` (non-streaming), with structured output (``output_config.format``),
- ``POST /v1/messages/count_tokens``,
- the Message Batches endpoints (create, retrieve, list, results, cancel, delete).

Replies come from a *responder* callable, from regex *rules* on the last user message, or a fixed text.
Faults (429, 529, 500, connection reset, timeout, malformed JSON) can be injected on a schedule or at a
seeded rate, and every request is kept in a thread-safe log that tests can assert on. API keys are
checked for presence (or against an expected value) but never stored.

Run ``python -m evalkit.testing.server._server --port 0 --text "..."`` to serve until Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import random
import re
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, cast
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "DEFAULT_TEXT",
    "FAULT_KINDS",
    "PINNED_MODEL_IDS",
    "FaultKind",
    "FaultPlan",
    "LocalAnthropicServer",
    "Reply",
    "RequestRecord",
    "Responder",
    "count_input_tokens",
    "estimate_tokens",
    "example_from_schema",
    "last_user_text",
    "main",
    "output_schema",
]

FaultKind = Literal["rate_limit", "overloaded", "server_error", "connection_reset", "timeout", "malformed"]
"""What an injected fault does:

- ``rate_limit``: 429 ``rate_limit_error`` with a ``retry-after`` header,
- ``overloaded``: 529 ``overloaded_error``,
- ``server_error``: 500 ``api_error``,
- ``connection_reset``: the socket is closed (RST) without a response,
- ``timeout``: the server holds the request unanswered until the client gives up (closes the connection),
  the server stops, or ``hang_s`` seconds pass (then closes without a response),
- ``malformed``: 200 with a truncated JSON body.
"""

FAULT_KINDS: tuple[FaultKind, ...] = (
    "rate_limit",
    "overloaded",
    "server_error",
    "connection_reset",
    "timeout",
    "malformed",
)

_QUICK_FAULT_KINDS: tuple[FaultKind, ...] = ("rate_limit", "overloaded", "server_error", "connection_reset")

_FAULT_ALIASES: dict[str, FaultKind] = {
    "429": "rate_limit",
    "529": "overloaded",
    "500": "server_error",
    "reset": "connection_reset",
    "malformed_json": "malformed",
}

PINNED_MODEL_IDS: dict[str, str] = {
    "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5": "claude-haiku-4-5-20251001",
    "claude-opus-4-5": "claude-opus-4-5-20251101",
}
"""Undated aliases and the dated ids the API resolves them to; pass as ``models=`` to resolve like the API."""

DEFAULT_TEXT = "This is a reply from the local Anthropic-compatible server."

_BASE_INPUT_TOKENS = 8
_TOKENS_PER_MESSAGE = 3
_BATCH_TTL = timedelta(hours=24)

# Header values safe to keep in the request log; everything else is kept by name only.
_LOGGED_HEADER_VALUES = frozenset(
    {
        "anthropic-version",
        "anthropic-beta",
        "content-type",
        "accept",
        "user-agent",
        "idempotency-key",
        "x-stainless-retry-count",
        "x-stainless-helper",
        "x-stainless-helper-method",
        "x-stainless-timeout",
    }
)


def _normalise_fault(kind: str | int) -> FaultKind:
    text = str(kind)
    for known in FAULT_KINDS:
        if text == known:
            return known
    if text in _FAULT_ALIASES:
        return _FAULT_ALIASES[text]
    raise ValueError(f"unknown fault kind {kind!r}; expected one of {', '.join(FAULT_KINDS)}")


# --------------------------------------------------------------------------------------------------------------
# Public data types


@dataclass(frozen=True)
class Reply:
    """A reply from a responder or a rule, when a bare string or JSON value is not enough.

    ``text`` is sent as is; ``data`` (any JSON value) is sent as its JSON text. ``usage`` entries
    (``input_tokens``, ``output_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``)
    override the server's estimates; ``model`` overrides the resolved model id.
    """

    text: str | None = None
    data: Any = None
    stop_reason: str = "end_turn"
    model: str | None = None
    usage: Mapping[str, int] | None = None

    def render(self) -> str:
        if self.text is not None:
            return self.text
        if self.data is not None:
            return json.dumps(self.data, ensure_ascii=False)
        return ""


Responder = Callable[[dict[str, Any]], "str | dict[str, Any] | list[Any] | Reply"]
"""``(request_body) -> reply``: a string is the reply text, a dict or list is sent as JSON text."""


@dataclass(frozen=True)
class FaultPlan:
    """Which requests fail, and how.

    ``schedule`` maps a request index (0-based, in order of arrival, counting every request the server
    receives) to a fault kind. Other requests fail with probability ``rate``, with a kind drawn from
    ``kinds``; the draw for each index depends only on ``seed`` and the index, so a plan is reproducible
    whatever the thread timing. The default kinds are the ones that fail fast (no ``timeout`` or
    ``malformed``); name them to include them.
    """

    rate: float = 0.0
    kinds: Sequence[FaultKind | str] = _QUICK_FAULT_KINDS
    seed: int = 0
    schedule: Mapping[int, FaultKind | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], got {self.rate}")
        kinds = tuple(_normalise_fault(k) for k in self.kinds)
        if self.rate > 0 and not kinds:
            raise ValueError("a fault rate needs at least one fault kind")
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "schedule", {int(i): _normalise_fault(k) for i, k in self.schedule.items()})

    def fault_for(self, index: int) -> FaultKind | None:
        """The fault for the request with this index, or None."""
        scheduled = self.schedule.get(index)
        if scheduled is not None:
            return cast(FaultKind, scheduled)
        if self.rate <= 0:
            return None
        rng = random.Random(f"evalkit-fault:{self.seed}:{index}")
        if rng.random() < self.rate:
            return cast(FaultKind, rng.choice(list(self.kinds)))
        return None


@dataclass(frozen=True)
class RequestRecord:
    """One request as the server saw it. Secrets are never kept: auth headers are logged by name only.

    ``body`` is the JSON body as received (None when absent or not JSON), a fresh copy in each snapshot:
    neither a responder nor the reader of a snapshot can change what the log holds.
    ``status`` is None while a request is in flight and for faults that send no response
    (``connection_reset``, ``timeout``). Times are ``time.monotonic()`` seconds.
    """

    index: int
    method: str
    path: str
    body: Any
    header_names: tuple[str, ...]
    headers: Mapping[str, str]
    auth: Literal["x-api-key", "bearer"] | None
    fault: FaultKind | None
    status: int | None
    started_at: float
    finished_at: float | None

    @property
    def auth_present(self) -> bool:
        return self.auth is not None

    @property
    def duration_s(self) -> float | None:
        return None if self.finished_at is None else self.finished_at - self.started_at


# --------------------------------------------------------------------------------------------------------------
# Request helpers: text extraction, token estimates, structured output


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _content_text(content: Any) -> str:
    """The text of a message's content, for estimates and rule matching."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                kind = block.get("type")
                if kind == "text":
                    parts.append(str(block.get("text", "")))
                elif kind == "tool_result":
                    parts.append(_content_text(block.get("content")))
                elif kind == "tool_use":
                    parts.append(str(block.get("name", "")) + _canonical(block.get("input", {})))
                elif kind in ("thinking", "redacted_thinking"):
                    parts.append(str(block.get("thinking", "")))
                else:
                    parts.append(_canonical(block))
        return "\n".join(parts)
    return _canonical(content)


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the last user message of a Messages request ("" when there is none)."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return ""


def estimate_tokens(text: str) -> int:
    """About one token per four characters (rounded up)."""
    return (len(text) + 3) // 4


def output_schema(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks the reply to follow, or None.

    Reads ``output_config.format`` (what ``messages.parse(output_format=...)`` sends) and the older
    top-level ``output_format``.
    """
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else None
    if fmt is None:
        fmt = body.get("output_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = fmt.get("schema")
        return schema if isinstance(schema, dict) else {}
    return None


def count_input_tokens(body: Mapping[str, Any]) -> int:
    """The deterministic input-token estimate that both ``/v1/messages`` and ``count_tokens`` report.

    About one token per four characters of the system prompt, the messages' text, the tools' JSON and
    the output format's JSON, plus a few tokens per message and a small constant. Fields that
    ``count_tokens`` does not take (``max_tokens``, ``temperature``, ...) do not count.
    """
    parts: list[str] = []
    system = body.get("system")
    if system is not None:
        parts.append(_content_text(system))
    messages = body.get("messages")
    n_messages = 0
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict):
                n_messages += 1
                parts.append(_content_text(message.get("content")))
    tools = body.get("tools")
    if tools:
        parts.append(_canonical(tools))
    schema = output_schema(body)
    if schema is not None:
        parts.append(_canonical(schema))
    return estimate_tokens("\n".join(parts)) + _TOKENS_PER_MESSAGE * n_messages + _BASE_INPUT_TOKENS


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
    output. Constraints that the SDK moves into descriptions (minimum, pattern, ...) are not honoured.
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
        if isinstance(items, dict) and int(schema.get("minItems", 0) or 0) > 0:
            return [example_from_schema(items, root, _depth + 1)]
        return []
    if type_ == "string":
        return _FORMAT_EXAMPLES.get(str(schema.get("format", "")), "example")
    if type_ == "integer":
        return 1
    if type_ == "number":
        return 1.0
    if type_ == "boolean":
        return False
    return None


def _error_type_for(status: int) -> str:
    return {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error" if status >= 500 else "invalid_request_error")


_BATCH_PATH = re.compile(r"/v1/messages/batches/([^/]+)(/results|/cancel)?")


def _allowed_methods(path: str) -> tuple[str, ...]:
    """The methods served on a path (none: no such path), for telling 405 from 404."""
    if path in ("/v1/messages", "/v1/messages/count_tokens"):
        return ("POST",)
    if path == "/v1/messages/batches":
        return ("GET", "POST")
    match = _BATCH_PATH.fullmatch(path)
    if match is None:
        return ()
    return {"/results": ("GET",), "/cancel": ("POST",)}.get(match.group(2) or "", ("GET", "DELETE"))


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


class _RequestError(Exception):
    """An API error answered to the client (400, 404, ...)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class _ResolvedReply:
    text: str
    stop_reason: str
    model: str
    usage: dict[str, Any]


@dataclass
class _Batch:
    id: str
    created_at: datetime
    ready_at: float
    items: list[tuple[str, dict[str, Any]]]
    delay: timedelta = timedelta(0)
    cancel_initiated_at: datetime | None = None
    ended_at: datetime | None = None
    results: list[dict[str, Any]] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class _Record:
    index: int
    method: str
    path: str
    raw: bytes  # the JSON body as received (b"" when absent or not JSON): bytes, so nothing can change it
    header_names: tuple[str, ...]
    headers: dict[str, str]
    auth: Literal["x-api-key", "bearer"] | None
    fault: FaultKind | None = None
    status: int | None = None
    started_at: float = 0.0
    finished_at: float | None = None

    def snapshot(self) -> RequestRecord:
        return RequestRecord(
            index=self.index,
            method=self.method,
            path=self.path,
            body=json.loads(self.raw) if self.raw else None,  # a fresh copy for each reader
            header_names=self.header_names,
            headers=dict(self.headers),
            auth=self.auth,
            fault=self.fault,
            status=self.status,
            started_at=self.started_at,
            finished_at=self.finished_at,
        )


# --------------------------------------------------------------------------------------------------------------
# HTTP plumbing


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    app: LocalAnthropicServer


class _HTTPServer6(_HTTPServer):
    address_family = socket.AF_INET6


class _Headers(dict[str, str]):
    """Request headers by lower-cased name: what the handler reads of them, without the email parser.

    ``http.client.parse_headers`` builds an email message per request: about a quarter of the server's CPU.
    """

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


_MAX_HEADERS = 100
_MAX_LINE = 65536


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    headers: _Headers  # type: ignore[assignment]
    raw_requestline: bytes
    arrived: float
    # headers and body go out as one write; TCP_NODELAY as well, so no small write waits for a delayed ACK
    disable_nagle_algorithm = True
    # Idle keep-alive connections are dropped after this many seconds.
    timeout = 30.0

    def parse_request(self) -> bool:
        """The request line and headers, as ``BaseHTTPRequestHandler.parse_request`` reads them (HTTP/1.0 and
        1.1), into a plain mapping."""
        self.arrived = time.monotonic()  # the request line is in: the latency asked for counts from here
        self.command = None  # type: ignore[assignment]
        self.request_version = "HTTP/1.0"  # not 0.9, whose error replies would have no status line
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if len(words) != 3 or words[2] not in ("HTTP/1.1", "HTTP/1.0"):
            self.send_error(400, f"Bad request line ({self.requestline!r})")
            return False
        self.command, self.path, self.request_version = words
        self.close_connection = self.request_version != "HTTP/1.1"
        headers = _Headers()
        for _ in range(_MAX_HEADERS + 1):
            line = self.rfile.readline(_MAX_LINE + 1)
            if len(line) > _MAX_LINE:
                self.send_error(431, "Line too long")
                return False
            if line in (b"\r\n", b"\n", b""):
                break
            name, sep, value = str(line, "iso-8859-1").partition(":")
            if not sep or not name.strip():
                self.send_error(400, f"Bad header line ({line[:100]!r})")
                return False
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        else:
            self.send_error(431, "Too many headers")
            return False
        self.headers = headers
        connection = headers.get("connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive":
            self.close_connection = False
        if headers.get("expect", "").lower() == "100-continue":
            return self.handle_expect_100()
        return True

    def on_answer(self, status: int | None) -> None:
        """Called just before a response (or an abort) goes out; the server completes its log record."""

    def setup(self) -> None:
        super().setup()
        self.server.app._track_connection(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.app._track_connection(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.server.app._handle(self)

    def do_POST(self) -> None:
        self.server.app._handle(self)

    def do_DELETE(self) -> None:
        self.server.app._handle(self)

    if not TYPE_CHECKING:  # hidden from type checkers, for whom a __getattr__ would make every name valid

        def __getattr__(self, name: str) -> Any:
            """``do_PUT``, ``do_HEAD``, ...: every other method gets an API error (405 or 404), not a 501 page."""
            if name.startswith("do_"):
                return self.do_GET
            raise AttributeError(name)

    def read_body(self) -> bytes:
        """The request body; ValueError when its length cannot be told (a bad Content-Length or chunk size)."""
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size_line = self.rfile.readline()
                size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                if size < 0:
                    raise ValueError(f"invalid chunk size {size_line[:40]!r}")
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        text = self.headers.get("content-length") or "0"
        if not (text.isascii() and text.isdigit()):
            raise ValueError(f"content-length: {text[:40]!r} is not a number of bytes")
        length = int(text)
        return self.rfile.read(length) if length > 0 else b""

    def send_bytes(self, status: int, payload: bytes, headers: Mapping[str, str]) -> None:
        """The whole response in one write."""
        self.on_answer(status)
        phrase = self.responses[status][0] if status in self.responses else ""
        lines = [f"HTTP/1.1 {status} {phrase}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines.append(f"content-length: {len(payload)}")
        if self.close_connection:
            lines.append("connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.wfile.write(head if self.command == "HEAD" else head + payload)
        self.wfile.flush()

    def abort(self) -> None:
        """Close the connection at once (RST), without a response."""
        self.on_answer(None)
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        with contextlib.suppress(OSError):
            self.connection.close()

    def drain_and_close(self, seconds: float = 1.0) -> None:
        """After the reply to a request whose body could not be read: end the connection (FIN) and drop what the
        client still sends for up to `seconds`, so that closing does not reset the connection under the reply."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(0.1)
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and self.connection.recv(65536):
                pass


# --------------------------------------------------------------------------------------------------------------
# The server


class LocalAnthropicServer:
    """An Anthropic-compatible API server on 127.0.0.1, for tests, benchmarks and offline development.

    Args:
        responder: ``(request_body) -> str | dict | list | Reply`` for every message reply not matched by
            a rule. An exception in it answers 500 ``api_error`` (and is kept in ``responder_errors``).
        rules: ``(regex, reply)`` pairs, tried in order with ``re.search`` on the text of the last user
            message; the first match wins.
        text: the reply when no rule matches and there is no responder. A structured-output request
            gets a small example of its schema instead.
        models: requested model -> the resolved id the reply names (e.g. ``PINNED_MODEL_IDS``);
            a model not in it is echoed.
        latency: seconds from the arrival of each ``/v1/messages`` request (its request line) to its reply, the
            server's own work included, or ``(request_body) -> seconds``.
        faults: ``{request_index: kind}`` or a ``FaultPlan``. Indexes count every request in order of
            arrival; a request that fails authentication is answered 401 and gets no fault, nor does one whose
            body cannot be read (a bad ``Content-Length``: 400).
        retry_after: seconds sent in the ``retry-after`` header of a 429.
        hang_s: the longest a ``timeout`` fault holds a request unanswered; it is held until the client gives up
            (closes the connection), the server stops or this passes (then closed without a response). The
            default, 15 minutes, outlasts the SDK's default timeout (10 minutes), so the client times out.
        host: the address to bind; an IPv6 address (``::1``) binds an IPv6 socket.
        port: the port to bind; 0 picks a free one.
        batch_delay: seconds after creation before a batch ends (0: ended at the first retrieve).
        api_key: if set, the only key accepted; otherwise any non-empty key is.
        require_auth: answer 401 to requests without ``x-api-key`` or ``Authorization: Bearer``.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        rules: Sequence[tuple[str | re.Pattern[str], str | dict[str, Any] | list[Any] | Reply]] = (),
        text: str = DEFAULT_TEXT,
        models: Mapping[str, str] | None = None,
        latency: float | Callable[[dict[str, Any]], float] = 0.0,
        faults: Mapping[int, FaultKind | str] | FaultPlan | None = None,
        retry_after: float = 1.0,
        hang_s: float = 900.0,
        batch_delay: float = 0.0,
        api_key: str | None = None,
        require_auth: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.responder = responder
        self.rules: list[tuple[re.Pattern[str], str | dict[str, Any] | list[Any] | Reply]] = [
            (re.compile(pattern) if isinstance(pattern, str) else pattern, reply) for pattern, reply in rules
        ]
        self.text = text
        self.models: dict[str, str] = dict(models or {})
        self.latency = latency
        if faults is None:
            self.faults = FaultPlan()
        elif isinstance(faults, FaultPlan):
            self.faults = faults
        else:
            self.faults = FaultPlan(schedule=faults)
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.batch_delay = batch_delay
        self._expected_key = api_key
        self.require_auth = require_auth
        self.host = host
        self.port = port

        self.responder_errors: list[BaseException] = []
        self._log: list[_Record] = []
        self._log_lock = threading.Lock()
        self._counter = itertools.count()
        self._ids = itertools.count(1)
        self._in_flight = 0
        self._max_in_flight = 0
        self._batches: dict[str, _Batch] = {}
        self._batches_lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ------------------------------------------------------------------------------------------

    def start(self) -> LocalAnthropicServer:
        """Bind (a free port when ``port=0``) and serve on a daemon thread. Returns self."""
        if self._httpd is not None:
            raise RuntimeError("server already started")
        # a host with a colon is an IPv6 address (base_url brackets it), which an IPv4 socket cannot bind
        server_class = _HTTPServer6 if ":" in self.host else _HTTPServer
        httpd = server_class((self.host, self.port), _Handler)
        httpd.app = self
        self._httpd = httpd
        self.port = int(httpd.server_address[1])
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"evalkit-local-anthropic-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and wake requests that are sleeping (latency, hangs)."""
        httpd = self._httpd
        if httpd is None or self._stopping.is_set():
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def __enter__(self) -> LocalAnthropicServer:
        if self._httpd is None:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (``http://[::1]:PORT`` for an IPv6 host; no trailing slash); pass it as the SDK's
        ``base_url``."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"http://{host}:{self.port}"

    # ---- request log ----------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RequestRecord]:
        """A snapshot of the request log, in order of arrival."""
        with self._log_lock:
            return [record.snapshot() for record in self._log]

    def requests_to(self, path: str, method: str | None = None) -> list[RequestRecord]:
        """The logged requests to one path (``/v1/messages``, ...), optionally of one method."""
        return [r for r in self.requests if r.path == path and (method is None or r.method == method)]

    def clear_log(self) -> None:
        """Forget logged requests and the in-flight maximum (request indexes keep counting)."""
        with self._log_lock:
            self._log.clear()
            self._max_in_flight = self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most requests the server has been handling at once."""
        with self._log_lock:
            return self._max_in_flight

    @property
    def in_flight(self) -> int:
        with self._log_lock:
            return self._in_flight

    # ---- internals ------------------------------------------------------------------------------------------

    def _track_connection(self, conn: socket.socket, *, add: bool) -> None:
        with self._connections_lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _hold(self, handler: _Handler, seconds: float) -> None:
        """Keep a request unanswered until its client closes the connection, the server stops or `seconds`
        pass, whichever is first. (``stop`` shuts every connection down, which wakes the wait at once.)"""
        conn = handler.connection
        deadline = time.monotonic() + seconds
        while not self._stopping.is_set() and (remaining := deadline - time.monotonic()) > 0:
            try:
                readable, _, _ = select.select([conn], [], [], min(remaining, 0.25))
                if readable and not conn.recv(1, socket.MSG_PEEK):
                    return  # the client gave up: its end of the connection is closed
            except (OSError, ValueError):  # reset by the client, or closed by stop()
                return
            if readable:  # the client sent more without waiting for the reply: keep holding, without spinning
                self._stopping.wait(min(remaining, 0.25))

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_local_{next(self._ids):012x}"

    def _auth_of(self, handler: _Handler) -> tuple[Literal["x-api-key", "bearer"] | None, bool]:
        """Which auth scheme the request used, and whether its key is acceptable."""
        key = handler.headers.get("x-api-key")
        if key:
            return "x-api-key", self._expected_key is None or key == self._expected_key
        authorization = handler.headers.get("authorization") or ""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return "bearer", self._expected_key is None or token.strip() == self._expected_key
        return None, False

    def _handle(self, handler: _Handler) -> None:
        started = handler.arrived  # set by parse_request, which every request passes first
        method = handler.command
        path = urlsplit(handler.path).path.rstrip("/") or "/"
        unreadable: str | None = None
        try:
            raw = handler.read_body()
        except ValueError as exc:  # a bad Content-Length or chunk size: answered 400 (and logged)
            raw, unreadable = b"", f"the request body cannot be read: {exc}"
        except OSError:
            handler.abort()
            return
        body: Any = None
        body_error: str | None = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError as exc:
                body_error = f"request body is not valid JSON: {exc}"
        auth, auth_ok = self._auth_of(handler)
        names = tuple(sorted({name.lower() for name in handler.headers}))
        logged = {
            name.lower(): value
            for name, value in handler.headers.items()
            if name.lower() in _LOGGED_HEADER_VALUES
        }
        with self._log_lock:
            record = _Record(
                index=next(self._counter),
                method=method,
                path=path,
                raw=raw if body is not None else b"",
                header_names=names,
                headers=logged,
                auth=auth,
                started_at=started,
            )
            self._log.append(record)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        request_id = f"req_local_{record.index:012x}"
        # The record is completed just before the answer leaves, so that a client that has its reply
        # always finds the request logged with its status (and no longer in flight).
        handler.on_answer = lambda status: self._complete(record, status)  # type: ignore[method-assign]
        try:
            if unreadable is not None:  # before auth and faults: where this request ends is not known
                handler.close_connection = True  # (and the reply says so)
                self._send_error(handler, 400, unreadable, request_id)
                handler.drain_and_close()
            else:
                self._respond(handler, record, body, body_error, auth_ok, request_id)
        except OSError:
            handler.close_connection = True  # the client went away (or the server is stopping)
        except Exception as exc:  # a bug here must not kill the connection silently
            self.responder_errors.append(exc)
            if record.finished_at is None:
                self._send_error(handler, 500, f"local server error: {exc}", request_id)
        finally:
            self._complete(record, None)

    def _complete(self, record: _Record, status: int | None) -> None:
        with self._log_lock:
            if record.finished_at is not None:
                return
            record.status = status
            record.finished_at = time.monotonic()
            self._in_flight -= 1

    def _send_json(
        self,
        handler: _Handler,
        status: int,
        payload: Any,
        request_id: str,
        extra_headers: Mapping[str, str] | None = None,
    ) -> int:
        headers = {"content-type": "application/json", "request-id": request_id, **(extra_headers or {})}
        handler.send_bytes(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), headers)
        return status

    def _send_error(
        self,
        handler: _Handler,
        status: int,
        message: str,
        request_id: str,
        extra_headers: Mapping[str, str] | None = None,
    ) -> int:
        payload = {
            "type": "error",
            "error": {"type": _error_type_for(status), "message": message},
            "request_id": request_id,
        }
        return self._send_json(handler, status, payload, request_id, extra_headers)

    def _respond(
        self,
        handler: _Handler,
        record: _Record,
        body: Any,
        body_error: str | None,
        auth_ok: bool,
        request_id: str,
    ) -> int | None:
        if self.require_auth and not auth_ok:
            message = (
                "invalid x-api-key"
                if record.auth is not None
                else "missing authentication: send an x-api-key or an Authorization: Bearer header"
            )
            return self._send_error(handler, 401, message, request_id)

        fault = self.faults.fault_for(record.index)
        if fault is not None:
            with self._log_lock:
                record.fault = fault
            return self._inject(handler, fault, request_id)

        try:
            if body_error is not None:
                raise _RequestError(400, body_error)
            return self._route(handler, record, body, request_id)
        except _RequestError as exc:
            return self._send_error(handler, exc.status, exc.message, request_id)

    def _inject(self, handler: _Handler, fault: FaultKind, request_id: str) -> int | None:
        if fault == "rate_limit":
            seconds = self.retry_after
            header = str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"
            return self._send_error(
                handler,
                429,
                "Number of requests has exceeded your rate limit",
                request_id,
                {"retry-after": header},
            )
        if fault == "overloaded":
            return self._send_error(handler, 529, "Overloaded", request_id)
        if fault == "server_error":
            return self._send_error(handler, 500, "Internal server error", request_id)
        if fault == "connection_reset":
            handler.abort()
            return None
        if fault == "timeout":
            self._hold(handler, self.hang_s)
            handler.abort()
            return None
        # malformed: a 200 whose JSON body is cut short
        payload = (
            b'{"id": "msg_local_malformed", "type": "message", "role": "assistant", "content": [{"type": "te'
        )
        handler.send_bytes(200, payload, {"content-type": "application/json", "request-id": request_id})
        return 200

    def _route(self, handler: _Handler, record: _Record, body: Any, request_id: str) -> int:
        method, path = record.method, record.path
        if path == "/v1/messages" and method == "POST":
            message = self._message_reply(self._require_dict(body), request_id, since=record.started_at)
            return self._send_json(handler, 200, message, request_id)
        if path == "/v1/messages/count_tokens" and method == "POST":
            count_body = self._require_dict(body)
            self._validate_messages(count_body, count_only=True)
            return self._send_json(handler, 200, {"input_tokens": count_input_tokens(count_body)}, request_id)
        if path == "/v1/messages/batches":
            if method == "POST":
                return self._send_json(handler, 200, self._create_batch(self._require_dict(body)), request_id)
            if method == "GET":
                query = parse_qs(urlsplit(handler.path).query)
                return self._send_json(handler, 200, self._list_batches(query), request_id)
        match = _BATCH_PATH.fullmatch(path)
        if match:
            batch_id, action = match.group(1), match.group(2)
            if action is None and method == "GET":
                return self._send_json(handler, 200, self._batch_json(self._get_batch(batch_id)), request_id)
            if action is None and method == "DELETE":
                self._delete_batch(batch_id)
                return self._send_json(
                    handler, 200, {"id": batch_id, "type": "message_batch_deleted"}, request_id
                )
            if action == "/cancel" and method == "POST":
                return self._send_json(handler, 200, self._cancel_batch(batch_id), request_id)
            if action == "/results" and method == "GET":
                lines = self._batch_results(batch_id)
                payload = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode(
                    "utf-8"
                )
                handler.send_bytes(
                    200, payload, {"content-type": "application/x-jsonl", "request-id": request_id}
                )
                return 200
        allowed = _allowed_methods(path)
        if allowed:
            raise _RequestError(405, f"{method} is not allowed on {path}; use {' or '.join(allowed)}")
        raise _RequestError(404, f"no route for {method} {path}")

    @staticmethod
    def _require_dict(body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _RequestError(400, "request body must be a JSON object")
        return body

    @staticmethod
    def _validate_messages(body: Mapping[str, Any], *, count_only: bool = False) -> None:
        if not isinstance(body.get("model"), str) or not body.get("model"):
            raise _RequestError(400, "model: field required")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _RequestError(400, "messages: at least one message is required")
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                raise _RequestError(400, f"messages.{i}.role: must be 'user' or 'assistant'")
            if "content" not in message:
                raise _RequestError(400, f"messages.{i}.content: field required")
        if count_only:
            return
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise _RequestError(400, "max_tokens: must be a positive integer")
        if body.get("stream"):
            raise _RequestError(400, "stream: streaming is not supported by the local server")

    def _resolve_reply(self, body: dict[str, Any]) -> _ResolvedReply:
        # what the body asks for is read before the responder, which may change the body it is given
        input_tokens = count_input_tokens(body)
        requested = str(body.get("model"))
        schema = output_schema(body)
        reply: str | dict[str, Any] | list[Any] | Reply | None = None
        if self.rules:
            user_text = last_user_text(body)
            for pattern, rule_reply in self.rules:
                if pattern.search(user_text):
                    reply = rule_reply
                    break
        if reply is None and self.responder is not None:
            try:
                reply = self.responder(body)
            except Exception as exc:
                self.responder_errors.append(exc)
                raise _RequestError(500, f"responder raised {type(exc).__name__}: {exc}") from exc
        if reply is None:
            reply = self.text if schema is None else Reply(data=example_from_schema(schema))

        model = self.models.get(requested, requested)
        stop_reason = "end_turn"
        overrides: Mapping[str, int] = {}
        if isinstance(reply, Reply):
            text = reply.render()
            stop_reason = reply.stop_reason
            model = reply.model or model
            overrides = reply.usage or {}
        elif isinstance(reply, str):
            text = reply
        else:
            text = json.dumps(reply, ensure_ascii=False)
        usage: dict[str, Any] = {
            "input_tokens": input_tokens,
            "output_tokens": max(1, estimate_tokens(text)),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        usage.update(overrides)
        return _ResolvedReply(text=text, stop_reason=stop_reason, model=model, usage=usage)

    def _message_reply(
        self, body: dict[str, Any], request_id: str, *, since: float | None = None, batch: bool = False
    ) -> dict[str, Any]:
        """The reply to a messages request; given `since` (when the request arrived), it is held back until the
        server's latency has passed since then."""
        self._validate_messages(body)
        delay = 0.0
        if since is not None:  # (read before the responder can change the body)
            delay = float(self.latency(body) if callable(self.latency) else self.latency)
        reply = self._resolve_reply(body)
        usage = {**reply.usage, "service_tier": "batch" if batch else "standard"}
        message = {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": reply.model,
            "content": [{"type": "text", "text": reply.text}],
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        if since is not None:
            # the wait is what remains of the latency once the request is read and the reply made, so the
            # server's own work is part of the latency asked for rather than added to it
            self._sleep(delay - (time.monotonic() - since))
        return message

    # ---- batches --------------------------------------------------------------------------------------------

    def _create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise _RequestError(400, "requests: at least one request is required")
        items: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        for i, item in enumerate(requests):
            if not isinstance(item, dict):
                raise _RequestError(400, f"requests.{i}: must be an object")
            custom_id = item.get("custom_id")
            params = item.get("params")
            if not isinstance(custom_id, str) or not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", custom_id):
                raise _RequestError(400, f"requests.{i}.custom_id: 1-64 letters, digits, '_' or '-'")
            if custom_id in seen:
                raise _RequestError(400, f"requests.{i}.custom_id: duplicate custom_id {custom_id!r}")
            if not isinstance(params, dict):
                raise _RequestError(400, f"requests.{i}.params: must be an object")
            seen.add(custom_id)
            items.append((custom_id, params))
        batch = _Batch(
            id=self._next_id("msgbatch"),
            created_at=datetime.now(UTC),
            ready_at=time.monotonic() + self.batch_delay,
            items=items,
            delay=timedelta(seconds=self.batch_delay),
        )
        with self._batches_lock:
            self._batches[batch.id] = batch
        return self._batch_json(batch, fresh=True)

    def _get_batch(self, batch_id: str) -> _Batch:
        with self._batches_lock:
            batch = self._batches.get(batch_id)
        if batch is None:
            raise _RequestError(404, f"no message batch {batch_id!r}")
        return batch

    def _delete_batch(self, batch_id: str) -> None:
        batch = self._get_batch(batch_id)
        self._settle(batch)
        if batch.ended_at is None:
            raise _RequestError(400, "a batch can be deleted only once it has ended; cancel it first")
        with self._batches_lock:
            self._batches.pop(batch_id, None)

    def _list_batches(self, query: Mapping[str, list[str]]) -> dict[str, Any]:
        """A page of batches, newest first: ``limit`` (1-1000, default 20) of them, after ``after_id`` or just
        before ``before_id``, as the API pages them."""
        limit_text = query.get("limit", ["20"])[-1]
        if not (limit_text.isascii() and limit_text.isdigit() and 1 <= int(limit_text) <= 1000):
            raise _RequestError(400, f"limit: must be an integer from 1 to 1000, got {limit_text!r}")
        limit = int(limit_text)
        after_id, before_id = query.get("after_id", [""])[-1], query.get("before_id", [""])[-1]
        if after_id and before_id:
            raise _RequestError(400, "after_id and before_id cannot both be given")
        with self._batches_lock:
            # newest first; ids count up in order of creation (created_at may tie, or step back with the clock)
            batches = sorted(self._batches.values(), key=lambda b: b.id, reverse=True)
        ids = [b.id for b in batches]
        cursor = after_id or before_id
        if cursor and cursor not in ids:
            raise _RequestError(
                404, f"no message batch {cursor!r} (the {'after_id' if after_id else 'before_id'})"
            )
        if before_id:
            end = ids.index(before_id)
            page, has_more = batches[max(0, end - limit) : end], end > limit
        else:
            start = ids.index(after_id) + 1 if after_id else 0
            page, has_more = batches[start : start + limit], start + limit < len(batches)
        data = [self._batch_json(b) for b in page]
        return {
            "data": data,
            "has_more": has_more,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }

    def _settle(self, batch: _Batch) -> None:
        """End the batch if it is due (or canceled), computing its results once."""
        with batch.lock:
            if batch.results is not None:
                return
            # ended_at is when the batch ended (at its cancel, or batch_delay after creation), whenever it is seen
            if batch.cancel_initiated_at is not None:
                batch.results = [{"custom_id": cid, "result": {"type": "canceled"}} for cid, _ in batch.items]
                batch.ended_at = batch.cancel_initiated_at
            elif time.monotonic() >= batch.ready_at:
                batch.results = [self._batch_item_result(cid, params) for cid, params in batch.items]
                batch.ended_at = batch.created_at + batch.delay

    def _batch_item_result(self, custom_id: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            message = self._message_reply(params, "", batch=True)
        except _RequestError as exc:
            error = {
                "type": "error",
                "error": {"type": _error_type_for(exc.status), "message": exc.message},
                "request_id": None,
            }
            return {"custom_id": custom_id, "result": {"type": "errored", "error": error}}
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}

    def _batch_json(self, batch: _Batch, *, fresh: bool = False) -> dict[str, Any]:
        if not fresh:
            self._settle(batch)
        ended = batch.results is not None
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if batch.results is None:
            counts["processing"] = len(batch.items)
            status = "canceling" if batch.cancel_initiated_at is not None else "in_progress"
        else:
            for line in batch.results:
                counts[line["result"]["type"]] += 1
            status = "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts,
            "created_at": _rfc3339(batch.created_at),
            "expires_at": _rfc3339(batch.created_at + _BATCH_TTL),
            "ended_at": _rfc3339(batch.ended_at) if batch.ended_at else None,
            "cancel_initiated_at": _rfc3339(batch.cancel_initiated_at) if batch.cancel_initiated_at else None,
            "archived_at": None,
            "results_url": f"{self.base_url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _cancel_batch(self, batch_id: str) -> dict[str, Any]:
        batch = self._get_batch(batch_id)
        self._settle(batch)
        with batch.lock:
            if batch.results is None and batch.cancel_initiated_at is None:
                batch.cancel_initiated_at = datetime.now(UTC)
        # The cancel reply shows `canceling`; the next retrieve shows the batch ended.
        return self._batch_json(batch, fresh=True)

    def _batch_results(self, batch_id: str) -> list[dict[str, Any]]:
        batch = self._get_batch(batch_id)
        self._settle(batch)
        if batch.results is None:
            raise _RequestError(400, f"message batch {batch_id!r} is still processing")
        return list(batch.results)


# --------------------------------------------------------------------------------------------------------------
# Command line


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, checked; ``fault_plan`` is the FaultPlan its fault flags make."""
    parser = argparse.ArgumentParser(
        prog="python -m evalkit.testing.server._server",
        description="Serve a local Anthropic-compatible API until Ctrl-C, for offline suite development.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument(
        "--text",
        default=DEFAULT_TEXT,
        help="the reply text for every plain message (a structured-output request gets an example that fits "
        "its schema instead)",
    )
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each reply")
    parser.add_argument("--batch-delay", type=float, default=0.0, help="seconds before a batch ends")
    parser.add_argument(
        "--resolve-models",
        action="store_true",
        help="answer undated aliases with the dated model ids (claude-sonnet-4-5 -> claude-sonnet-4-5-20250929)",
    )
    parser.add_argument("--no-auth", action="store_true", help="accept requests without an API key")
    parser.add_argument(
        "--fault-rate",
        type=float,
        default=0.0,
        metavar="RATE",
        help="the share of requests, from 0 to 1, that fail with an injected fault (default: 0, none)",
    )
    parser.add_argument(
        "--faults",
        metavar="KINDS",
        help=f"comma-separated fault kinds to draw from (default: all: {','.join(FAULT_KINDS)}); "
        "a timeout fault holds the request until the client gives up",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed for which requests fail, and how (default: 0)"
    )
    args = parser.parse_args(argv)
    if not 0.0 <= args.fault_rate <= 1.0:  # (also false for nan)
        parser.error(f"--fault-rate: must be from 0 to 1, got {args.fault_rate:g}")
    kinds: tuple[FaultKind, ...] = FAULT_KINDS
    if args.faults is not None:
        if not args.fault_rate:
            parser.error("--faults: needs --fault-rate above 0")
        try:
            kinds = tuple(_normalise_fault(k.strip()) for k in args.faults.split(",") if k.strip())
        except ValueError as exc:
            parser.error(f"--faults: {exc}")
        if not kinds:
            parser.error(f"--faults: name at least one of {', '.join(FAULT_KINDS)}")
    args.fault_plan = FaultPlan(rate=args.fault_rate, kinds=kinds, seed=args.seed)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    server = LocalAnthropicServer(
        text=args.text,
        latency=args.latency,
        batch_delay=args.batch_delay,
        models=PINNED_MODEL_IDS if args.resolve_models else None,
        require_auth=not args.no_auth,
        faults=args.fault_plan,
        host=args.host,
        port=args.port,
    )
    try:
        server.start()
    except OSError as exc:  # an unknown host, a port in use, ...: a usage error, as argparse reports one
        where = f"--host {args.host} --port {args.port}"
        print(
            f"python -m evalkit.testing.server._server: error: cannot serve on {where}: {exc}",
            file=sys.stderr,
        )
        return 2
    print(server.base_url, flush=True)
    print(
        f"serving; use ANTHROPIC_BASE_URL={server.base_url} and any ANTHROPIC_API_KEY. Ctrl-C stops.",
        file=sys.stderr,
        flush=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
