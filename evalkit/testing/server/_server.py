"""The local Anthropic-compatible server: lifecycle, the request log, auth, faults and routing.

The server speaks enough of the Messages API for the official SDK to work against it unchanged:

- ``POST /v1/messages`` (non-streaming), with structured output (``output_config.format``),
- ``POST /v1/messages/count_tokens``,
- the Message Batches endpoints (create, retrieve, list, results, cancel, delete).

Replies come from a *responder* callable, from regex *rules* on the last user message, or a fixed text.
Faults (429, 529, 500, connection reset, timeout, malformed JSON) can be injected on a schedule or at a
seeded rate, and every request is kept in a thread-safe log that tests can assert on (the newest ones, within
the server's limits). API keys are checked for presence (or against an expected value) but never stored.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from evalkit.testing.server._api_errors import _RequestError, error_payload
from evalkit.testing.server._batches import BATCH_PATH, BatchStore
from evalkit.testing.server._faults import FaultKind, FaultPlan
from evalkit.testing.server._http import Handler, HTTPServer, HTTPServer6, _BodyRefused
from evalkit.testing.server._limits import ServerLimits, decode_json, reaches_beyond_loopback
from evalkit.testing.server._log import LOGGED_HEADER_VALUES, LogEntry, RequestLog, RequestRecord, kept_body
from evalkit.testing.server._messages import message_json, require_dict, validate_messages
from evalkit.testing.server._prompt_cache import PromptCache
from evalkit.testing.server._rate_limits import RateLimiter, RateLimits
from evalkit.testing.server._replies import DEFAULT_TEXT, Reply, Responder, Rule, compile_rules, resolve_reply
from evalkit.testing.server._simulated_judge import SimulatedJudge
from evalkit.testing.server._tokens import count_input_tokens

SIMULATED_HEADER = "x-evalkit-simulated"
"""The header a server built with ``simulated=True`` puts on every response."""

__all__ = ["SIMULATED_HEADER", "LocalAnthropicServer"]


def _allowed_methods(path: str) -> tuple[str, ...]:
    """The methods served on a path (none: no such path), for telling 405 from 404."""
    if path in ("/v1/messages", "/v1/messages/count_tokens"):
        return ("POST",)
    if path == "/v1/messages/batches":
        return ("GET", "POST")
    match = BATCH_PATH.fullmatch(path)
    if match is None:
        return ()
    return {"/results": ("GET",), "/cancel": ("POST",)}.get(match.group(2) or "", ("GET", "DELETE"))


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
        judge: answers evalkit's judge requests (before rules and the responder), e.g. a ``SimulatedJudge``;
            None (the default) leaves them to the rules, the responder and the default reply.
        rate_limits: requests and input tokens per minute for ``/v1/messages`` (``RateLimits``): a request over
            a limit gets 429 ``rate_limit_error`` with ``retry-after``; every response carries the
            ``anthropic-ratelimit-*`` headers. ``rate_limited`` counts the 429s sent.
        simulated: mark every reply as simulated: the model id of a reply that does not name its own gets a
            ``simulated-`` prefix (a model no price table knows), and every response has the header
            ``x-evalkit-simulated: true``.
        limits: what the server accepts and keeps (``ServerLimits``): the largest body (32 MiB; 413 beyond),
            open connections at once, deadlines for headers and body, and how much of the request log is kept.
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
        judge: SimulatedJudge | None = None,
        simulated: bool = False,
        rate_limits: RateLimits | None = None,
        limits: ServerLimits | None = None,
    ) -> None:
        self.responder = responder
        self.limits = limits if limits is not None else ServerLimits()
        self.rules: list[Rule] = compile_rules(rules)
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
        self.judge = judge
        self.simulated = simulated
        self.prompt_cache = PromptCache()
        """The prompt-cache entries requests have written (``cache_control`` prefixes), as the API keeps them."""
        self.rate_limits = rate_limits
        self._limiter = (
            RateLimiter(rate_limits)
            if rate_limits is not None and (rate_limits.rpm is not None or rate_limits.itpm is not None)
            else None
        )
        self._rate_limited = 0
        # headers every response carries, besides its own
        self._extra_headers: dict[str, str] = {SIMULATED_HEADER: "true"} if simulated else {}

        self.responder_errors: list[BaseException] = []
        self._log = RequestLog(self.limits)
        self._log_lock = threading.Lock()
        self._counter = itertools.count()
        self._ids = itertools.count(1)
        self._in_flight = 0
        self._max_in_flight = 0
        self._batches = BatchStore(
            make_message=lambda params: self._message_reply(params, "", batch=True),
            new_id=self._next_id,
            base_url=lambda: self.base_url,
        )
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle ------------------------------------------------------------------------------------------

    def start(self) -> LocalAnthropicServer:
        """Bind (a free port when ``port=0``) and serve on a daemon thread. Returns self."""
        if self._httpd is not None:
            raise RuntimeError("server already started")
        # a host with a colon is an IPv6 address (base_url brackets it), which an IPv4 socket cannot bind
        server_class = HTTPServer6 if ":" in self.host else HTTPServer
        httpd = server_class((self.host, self.port), Handler)
        httpd.app = self
        self._httpd = httpd
        self.port = int(httpd.server_address[1])
        self._thread = threading.Thread(
            target=httpd.serve,
            args=(self.limits, self._stopping),
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

    def exposure_warning(self) -> str | None:
        """What to tell whoever starts this server when it listens beyond this machine (``0.0.0.0``, ``::``, a
        LAN address): anyone who reaches it can use it. None on a loopback address."""
        if not reaches_beyond_loopback(self.host):
            return None
        everywhere = self.host in ("", "0.0.0.0", "::")
        where = "every network interface" if everywhere else f"{self.host}, beyond this machine"
        if not self.require_auth:
            keys = "it asks for no API key"
        elif self._expected_key is None:
            keys = "it accepts any API key"
        else:
            keys = "it accepts the API key it was given"
        return (
            f"warning: listening on {where}: anyone who can reach port {self.port} can use this server, and "
            f"{keys}; use --host 127.0.0.1 to serve this machine only"
        )

    # ---- request log ----------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RequestRecord]:
        """A snapshot of the request log, in order of arrival: the newest ``limits.log_requests`` requests at most
        (and no more body bytes than ``limits.log_bytes``); ``requests_dropped`` counts the older ones."""
        with self._log_lock:  # (copies: a record's status and times change together, under the lock)
            entries = [copy.copy(entry) for entry in self._log.entries]
        return [entry.snapshot() for entry in entries]

    @property
    def requests_dropped(self) -> int:
        """How many requests the log no longer holds, the oldest first, to keep within its limits."""
        with self._log_lock:
            return self._log.dropped

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
    def rate_limited(self) -> int:
        """How many requests the server's rate limits answered 429 (injected faults not counted)."""
        with self._log_lock:
            return self._rate_limited

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

    def _hold(self, handler: Handler, seconds: float) -> None:
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

    def _auth_of(self, handler: Handler) -> tuple[Literal["x-api-key", "bearer"] | None, bool]:
        """Which auth scheme the request used, and whether its key is acceptable."""
        key = handler.headers.get("x-api-key")
        if key:
            return "x-api-key", self._expected_key is None or key == self._expected_key
        authorization = handler.headers.get("authorization") or ""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return "bearer", self._expected_key is None or token.strip() == self._expected_key
        return None, False

    def _handle(self, handler: Handler) -> None:
        started = handler.arrived  # set by parse_request, which every request passes first
        method = handler.command
        path = urlsplit(handler.path).path.rstrip("/") or "/"
        refused: _BodyRefused | None = None
        try:
            raw = handler.read_body()
        except _BodyRefused as exc:  # a bad length, too large, too slow: answered (and logged), unread
            raw, refused = b"", exc
        except OSError:
            handler.abort()
            return
        body: Any = None
        body_error: str | None = None
        if raw:
            try:
                body = decode_json(raw)
            except _RequestError as exc:
                body_error = exc.message
        auth, auth_ok = self._auth_of(handler)
        names = tuple(sorted({name.lower() for name in handler.headers}))
        logged = {
            name.lower(): value
            for name, value in handler.headers.items()
            if name.lower() in LOGGED_HEADER_VALUES
        }
        kept, digest = kept_body(raw, self.limits) if body is not None else (b"", None)
        with self._log_lock:
            record = LogEntry(
                index=next(self._counter),
                method=method,
                path=path,
                raw=kept,
                header_names=names,
                headers=logged,
                auth=auth,
                started_at=started,
                body_length=len(raw),
                body_digest=digest,
            )
            self._log.append(record)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        request_id = f"req_local_{record.index:012x}"
        # (a handler serves every request of its connection: set afresh for each)
        handler.extra_headers = self._extra_headers
        # The record is completed just before the answer leaves, so that a client that has its reply
        # always finds the request logged with its status (and no longer in flight).
        handler.on_answer = lambda status: self._complete(record, status)  # type: ignore[method-assign]
        try:
            if refused is not None:  # before auth and faults: where this request ends is not known
                handler.close_connection = True  # (and the reply says so)
                message = refused.message
                if refused.status == 400:
                    message = f"the request body cannot be read: {message}"
                self._send_error(handler, refused.status, message, request_id)
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

    def _complete(self, record: LogEntry, status: int | None) -> None:
        with self._log_lock:
            if record.finished_at is not None:
                return
            record.status = status
            record.finished_at = time.monotonic()
            self._in_flight -= 1

    def _send_json(
        self,
        handler: Handler,
        status: int,
        payload: Any,
        request_id: str,
        extra_headers: Mapping[str, str] | None = None,
    ) -> int:
        headers = {"content-type": "application/json", "request-id": request_id, **(extra_headers or {})}
        try:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (from the request, echoed): escaped, still valid JSON
            data = json.dumps(payload).encode("ascii")
        handler.send_bytes(status, data, headers)
        return status

    def _send_error(
        self,
        handler: Handler,
        status: int,
        message: str,
        request_id: str,
        extra_headers: Mapping[str, str] | None = None,
    ) -> int:
        payload = error_payload(status, message, request_id)
        return self._send_json(handler, status, payload, request_id, extra_headers)

    def _respond(
        self,
        handler: Handler,
        record: LogEntry,
        body: Any,
        body_error: str | None,
        auth_ok: bool,
        request_id: str,
    ) -> int | None:
        if self._limiter is not None:  # every response says where the limits stand
            handler.extra_headers = {**self._extra_headers, **self._limiter.peek()}
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

        limiter = self._limiter
        if limiter is not None and record.path == "/v1/messages" and record.method == "POST":
            tokens = count_input_tokens(body) if isinstance(body, dict) else 0
            decision = limiter.take(tokens)
            handler.extra_headers = {**self._extra_headers, **decision.headers}
            if not decision.allowed:
                with self._log_lock:
                    record.rate_limited = True
                    self._rate_limited += 1
                return self._send_error(
                    handler,
                    429,
                    "This request would exceed the rate limit (requests or input tokens per minute); "
                    f"retry after {decision.retry_after} s",
                    request_id,
                    {"retry-after": str(decision.retry_after)},
                )

        try:
            if body_error is not None:
                raise _RequestError(400, body_error)
            return self._route(handler, record, body, request_id)
        except _RequestError as exc:
            return self._send_error(handler, exc.status, exc.message, request_id)

    def _inject(self, handler: Handler, fault: FaultKind, request_id: str) -> int | None:
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
        if fault == "spend_limit":
            message = "This request would exceed your account's monthly spend limit. Please try again later."
            return self._send_error(handler, 429, message, request_id)
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

    def _route(self, handler: Handler, record: LogEntry, body: Any, request_id: str) -> int:
        method, path = record.method, record.path
        if path == "/v1/messages" and method == "POST":
            message = self._message_reply(require_dict(body), request_id, since=record.started_at)
            return self._send_json(handler, 200, message, request_id)
        if path == "/v1/messages/count_tokens" and method == "POST":
            count_body = require_dict(body)
            validate_messages(count_body, count_only=True)
            return self._send_json(handler, 200, {"input_tokens": count_input_tokens(count_body)}, request_id)
        if path == "/v1/messages/batches":
            if method == "POST":
                return self._send_json(
                    handler, 200, self._batches.create(require_dict(body), delay=self.batch_delay), request_id
                )
            if method == "GET":
                query = parse_qs(urlsplit(handler.path).query)
                return self._send_json(handler, 200, self._batches.page(query), request_id)
        match = BATCH_PATH.fullmatch(path)
        if match:
            batch_id, action = match.group(1), match.group(2)
            if action is None and method == "GET":
                return self._send_json(
                    handler, 200, self._batches.to_json(self._batches.get(batch_id)), request_id
                )
            if action is None and method == "DELETE":
                self._batches.delete(batch_id)
                return self._send_json(
                    handler, 200, {"id": batch_id, "type": "message_batch_deleted"}, request_id
                )
            if action == "/cancel" and method == "POST":
                return self._send_json(handler, 200, self._batches.cancel(batch_id), request_id)
            if action == "/results" and method == "GET":
                lines = self._batches.results(batch_id)
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

    def _message_reply(
        self, body: dict[str, Any], request_id: str, *, since: float | None = None, batch: bool = False
    ) -> dict[str, Any]:
        """The reply to a messages request; given `since` (when the request arrived), it is held back until the
        server's latency has passed since then."""
        validate_messages(body)
        delay = 0.0
        if since is not None:  # (read before the responder can change the body)
            delay = float(self.latency(body) if callable(self.latency) else self.latency)
        input_usage, commit = self.prompt_cache.account(body)
        reply = resolve_reply(
            body,
            rules=self.rules,
            responder=self.responder,
            text=self.text,
            models=self.models,
            errors=self.responder_errors,
            judge=self.judge.answer if self.judge is not None else None,
            model_prefix="simulated-" if self.simulated else "",
            input_usage=input_usage,
        )
        message = message_json(reply, self._next_id("msg"), batch=batch)
        if since is not None:
            # the wait is what remains of the latency once the request is read and the reply made, so the
            # server's own work is part of the latency asked for rather than added to it
            self._sleep(delay - (time.monotonic() - since))
        commit()  # the prefix is cached once the response goes out: requests in flight alongside it missed it
        return message
