"""HTTP plumbing: the threading server, a lean request parser, and the handler that hands requests to the app."""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Protocol

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


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: HTTPServer
    headers: Headers  # type: ignore[assignment]
    raw_requestline: bytes
    arrived: float
    # headers and body go out as one write; TCP_NODELAY as well, so no small write waits for a delayed ACK
    disable_nagle_algorithm = True
    # Idle keep-alive connections are dropped after this many seconds.
    timeout = 30.0
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
