"""HTTP plumbing: the threading server, a lean request parser, and the handler that hands requests to the app.

A connection has a thread while it is open, and at most ``max_connections`` are open at once: the accept loop
waits for a free slot (asking idle keep-alive connections to make room), so the kernel's backlog holds the rest.
Every read runs against an absolute deadline (headers, then body), which bytes trickling in do not extend.
"""

from __future__ import annotations

import contextlib
import io
import re
import socket
import struct
import sys
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Protocol

from evalkit.testing.server._limits import ServerLimits

__all__ = ["App", "HTTPServer", "HTTPServer6", "Handler", "Headers"]


class App(Protocol):
    """What the handler needs of the server it serves for."""

    def _handle(self, handler: Handler) -> None: ...

    def _track_connection(self, conn: socket.socket, *, add: bool) -> None: ...


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    app: App
    limits: ServerLimits = ServerLimits()
    stopping: threading.Event
    # set while the accept loop waits for a free slot: idle keep-alive connections then close to make room
    crowded: bool = False
    _slots: threading.BoundedSemaphore

    def serve(self, limits: ServerLimits, stopping: threading.Event) -> None:
        """Serve until ``shutdown()``, with these limits; `stopping` set wakes whatever waits."""
        self.limits, self.stopping = limits, stopping
        self._slots = threading.BoundedSemaphore(limits.max_connections)
        self.serve_forever(poll_interval=0.05)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on a thread of its own once fewer than ``max_connections`` are open."""
        while not self._slots.acquire(timeout=0.05):
            self.crowded = True
            if self.stopping.is_set():
                self.shutdown_request(request)
                return
        self.crowded = False
        try:
            thread = threading.Thread(
                target=self.process_request_thread,
                args=(request, client_address),
                name=f"{threading.current_thread().name}-connection",
                daemon=True,
            )
            thread.start()
        except BaseException:  # no thread (out of resources): the slot goes back, the connection is dropped
            self._slots.release()
            self.shutdown_request(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that goes away (a reset, a broken pipe) ends its connection without a traceback."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class HTTPServer6(HTTPServer):
    address_family = socket.AF_INET6


class Headers(dict[str, str]):
    """Request headers by lower-cased name: what the handler reads of them, without the email parser.

    ``http.client.parse_headers`` builds an email message per request: about a quarter of the server's CPU.
    """

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


_MAX_HEADERS = 100
_MAX_LINE = 65536
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")  # 16 hex digits: 2**64 - 1, far past any body limit
# how often a connection waiting for its next request looks whether it should make room or stop
_IDLE_POLL_S = 0.1


class _BodyRefused(Exception):
    """A request body the server will not read: too large (413), malformed framing (400) or too slow (408)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _DeadlineReader(io.RawIOBase):
    """The connection's bytes, each read waiting at most until an absolute deadline.

    While a keep-alive connection waits for its next request (``idle``), it waits in short steps and gives up (as
    if the client had closed) when the server needs the slot or is stopping; the first byte of the request sets
    the deadline for its headers.
    """

    def __init__(self, sock: socket.socket, server: HTTPServer) -> None:
        self._sock = sock
        self._server = server
        self.deadline = 0.0
        self.idle = False
        self.what = "request"

    def readable(self) -> bool:
        return True

    def expect(self, what: str, seconds: float, *, idle: bool = False) -> None:
        self.what, self.idle = what, idle
        self.deadline = time.monotonic() + seconds

    def readinto(self, buffer: Any) -> int:
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                if self.idle:
                    return 0  # a keep-alive connection that stayed idle: closed like any other
                raise TimeoutError(f"the {self.what} did not arrive within its deadline")
            self._sock.settimeout(min(remaining, _IDLE_POLL_S) if self.idle else remaining)
            try:
                n = self._sock.recv_into(buffer)
            except TimeoutError:
                if self.idle and (self._server.crowded or self._server.stopping.is_set()):
                    return 0
                continue
            if n and self.idle:
                self.expect("request headers", self._server.limits.header_timeout)
            return n


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HTTPServer
    headers: Headers  # type: ignore[assignment]
    raw_requestline: bytes
    arrived: float
    # headers and body go out as one write; TCP_NODELAY as well, so no small write waits for a delayed ACK
    disable_nagle_algorithm = True
    _reader: _DeadlineReader
    _requests = 0  # requests begun on this connection
    # headers the server adds to every response on this connection (simulated marks, rate-limit state)
    extra_headers: Mapping[str, str] = {}

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
        headers = Headers()
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
        # (an Expect: 100-continue is answered when the body is read, after its length is checked)
        return True

    def on_answer(self, status: int | None) -> None:
        """Called just before a response (or an abort) goes out; the server completes its log record."""

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # reads go through the deadline reader instead
        self._reader = _DeadlineReader(self.connection, self.server)
        self.rfile = io.BufferedReader(self._reader)
        self.server.app._track_connection(self.connection, add=True)

    def handle_one_request(self) -> None:
        limits = self.server.limits
        if self._requests:  # a keep-alive connection waits for its next request, and makes room when asked
            self._reader.expect("request", limits.idle_timeout, idle=True)
        else:  # a new connection has until the header deadline for its first request's headers
            self._reader.expect("request headers", limits.header_timeout)
        self._requests += 1
        super().handle_one_request()

    def _writing(self) -> None:
        """Before a response goes out: a client that does not take it has `idle_timeout` seconds, not the
        remains of a read deadline."""
        with contextlib.suppress(OSError):
            self.connection.settimeout(self.server.limits.idle_timeout)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self._writing()
        super().send_error(code, message, explain)

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
        """The request body, read before its deadline.

        Raises ``_BodyRefused``: 400 when its length cannot be told (a bad ``Content-Length`` or chunk size),
        413 when it is larger than ``max_body`` (told before it is read), 408 when it does not arrive in time.
        OSError when the client goes away.
        """
        limits = self.server.limits
        chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        length = 0
        if not chunked:
            text = self.headers.get("content-length") or "0"
            if not (text.isascii() and text.isdigit()):
                raise _BodyRefused(400, f"content-length: {text[:40]!r} is not a number of bytes")
            length = int(text)
            if length > limits.max_body:
                raise _BodyRefused(413, _too_large(length, limits.max_body, "its content-length says"))
        if self.headers.get("expect", "").lower() == "100-continue":
            self._writing()
            self.send_response_only(100)
            self.end_headers()
        self._reader.expect("request body", limits.body_timeout)
        try:
            return self._read_chunked(limits.max_body) if chunked else self._read_exactly(length)
        except TimeoutError:
            raise _BodyRefused(
                408, f"the request body did not arrive within {limits.body_timeout:g} s of its headers"
            ) from None

    def _read_exactly(self, length: int) -> bytes:
        data = self.rfile.read(length) if length > 0 else b""
        if len(data) < length:
            raise ConnectionError("the client closed the connection before the end of the body")
        return data

    def _read_chunked(self, max_body: int) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(_MAX_LINE + 1)
            if not line.endswith(b"\n"):
                if len(line) > _MAX_LINE:
                    raise _BodyRefused(400, "a chunk size line is longer than 64 KiB")
                raise ConnectionError("the client closed the connection inside a chunked body")
            size_text = line.split(b";", 1)[0].strip()
            if not _CHUNK_SIZE.fullmatch(size_text):
                raise _BodyRefused(400, f"invalid chunk size {line[:40]!r}: expected 1 to 16 hex digits")
            size = int(size_text, 16)
            if size == 0:
                for _ in range(_MAX_HEADERS + 1):
                    trailer = self.rfile.readline(_MAX_LINE + 1)
                    if trailer in (b"\r\n", b"\n", b""):
                        return b"".join(chunks)
                    if len(trailer) > _MAX_LINE:
                        raise _BodyRefused(400, "a trailer line is longer than 64 KiB")
                raise _BodyRefused(400, f"more than {_MAX_HEADERS} trailer lines")
            total += size
            if total > max_body:
                raise _BodyRefused(413, _too_large(total, max_body, "its chunks come to at least"))
            chunks.append(self._read_exactly(size))
            if self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise _BodyRefused(400, "a chunk is not followed by CRLF: its size is wrong")

    def send_bytes(self, status: int, payload: bytes, headers: Mapping[str, str]) -> None:
        """The whole response in one write."""
        self.on_answer(status)
        self._writing()
        phrase = self.responses[status][0] if status in self.responses else ""
        lines = [f"HTTP/1.1 {status} {phrase}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if self.extra_headers:
            lines += [f"{name}: {value}" for name, value in self.extra_headers.items()]
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


def _too_large(size: int, limit: int, told: str) -> str:
    return (
        f"request body too large: {told} {size:,} bytes; this server takes at most {limit:,} "
        "(evalkit serve --max-body)"
    )
