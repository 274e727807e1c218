"""The local server's limits: body size, JSON shape, connections and deadlines, the request log, exposed binds.

Every exchange goes to 127.0.0.1, and every loop is bounded in count and in time.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import re
import select
import socket
import threading
import time
import tracemalloc
from typing import Any

import anthropic
import pytest
from server_helpers import API_KEY, MODEL, MakeServer, ask, first_text, raw_request, sdk

from evalkit.cli import _serve
from evalkit.testing import LocalAnthropicServer
from evalkit.testing.server import (
    MAX_JSON_DEPTH,
    ServerLimits,
    _http,
    main,
    max_number_digits,
    parse_size,
    reaches_beyond_loopback,
)

KIB = 1024
HEADERS = {"x-api-key": API_KEY, "content-type": "application/json"}


def _connect(server: LocalAnthropicServer, timeout: float = 5.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=timeout)


def _response(sock: socket.socket) -> bytes:
    """One response (or what arrived before the server closed the connection); bounded by the socket's timeout."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk
        head, sep, rest = data.partition(b"\r\n\r\n")
        length = re.search(rb"content-length: (\d+)", head, re.I)
        if sep and length and len(rest) >= int(length.group(1)):
            return data


def _exchange(server: LocalAnthropicServer, data: bytes, timeout: float = 5.0) -> bytes:
    with _connect(server, timeout) as sock:
        sock.sendall(data)
        return _response(sock)


def _status_and_error(response: bytes) -> tuple[int, dict[str, Any]]:
    head, _, payload = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 "), response[:200]
    return int(head.split(b" ", 2)[1]), json.loads(payload)


def _head(*lines: str) -> bytes:
    return (
        "\r\n".join(["POST /v1/messages HTTP/1.1", "host: 127.0.0.1", f"x-api-key: {API_KEY}", *lines])
        + "\r\n\r\n"
    ).encode()


# ---- body size ---------------------------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_answered_413_before_it_is_read(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(limits=ServerLimits(max_body=64 * KIB))
    started = time.monotonic()
    # 10 MiB announced, none of it sent: the answer comes from the length alone
    status, error = _status_and_error(_exchange(server, _head(f"content-length: {10 * KIB * KIB}")))
    assert status == 413 and time.monotonic() - started < 3.0
    assert error["type"] == "error" and error["error"]["type"] == "request_too_large"
    assert "10,485,760" in error["error"]["message"] and "65,536" in error["error"]["message"]
    # an Expect: 100-continue gets the 413 instead of the go-ahead
    response = _exchange(server, _head("expect: 100-continue", f"content-length: {65 * KIB}"))
    assert response.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in response

    # through the SDK: a body just over the limit is refused, one under it is served
    client = sdk(server)
    with pytest.raises(anthropic.APIStatusError) as caught:
        client.messages.create(**ask("x" * 70 * KIB))
    assert caught.value.status_code == 413
    assert caught.value.body["error"]["type"] == "request_too_large"  # type: ignore[index]
    assert first_text(client.messages.create(**ask("y" * 60 * KIB))) == server.text
    records = server.requests
    assert [(r.status, r.body_length) for r in records[:3]] == [(413, 0)] * 3
    assert records[3].status == 200 and records[3].body_length > 60 * KIB


def _chunked(*chunks: bytes) -> bytes:
    return _head("transfer-encoding: chunked") + b"".join(chunks)


def test_chunked_bodies_are_counted_as_they_come_and_bad_chunk_sizes_get_400(
    make_anthropic_server: MakeServer,
) -> None:
    server = make_anthropic_server(limits=ServerLimits(max_body=64 * KIB))
    body = json.dumps(ask("in chunks")).encode()
    ok = _exchange(
        server,
        _chunked(
            b"%x\r\n" % 10,
            body[:10],
            b"\r\n",
            b"%x;ext=1\r\n" % (len(body) - 10),
            body[10:],
            b"\r\n0\r\ntrailer: 1\r\n\r\n",
        ),
    )
    assert ok.startswith(b"HTTP/1.1 200 "), ok[:200]

    piece = b"x" * (16 * KIB)
    too_much = _chunked(*[b"4000\r\n" + piece + b"\r\n"] * 5)  # 80 KiB in all
    status, error = _status_and_error(_exchange(server, too_much))
    assert status == 413 and error["error"]["type"] == "request_too_large"
    # a huge chunk size is told before a byte of the chunk is read
    status, error = _status_and_error(_exchange(server, _chunked(b"7fffffffff\r\nabc")))
    assert status == 413 and "549,755,813,887" in error["error"]["message"]

    for size in (b"zz", b"-1", b"1_0", b"0x10", b"+5", b"", b" ", b"1" * 17, b"ffffffffffffffffff"):
        response = _exchange(server, _chunked(size + b"\r\nabc\r\n0\r\n\r\n"))
        status, error = _status_and_error(response)
        assert status == 400, (size, response[:200])
        assert error["error"]["type"] == "invalid_request_error" and "chunk size" in error["error"]["message"]
    # a chunk longer than its size says
    status, error = _status_and_error(_exchange(server, _chunked(b"2\r\nabcdef\r\n0\r\n\r\n")))
    assert status == 400 and "CRLF" in error["error"]["message"]
    assert server.responder_errors == []
    assert first_text(sdk(server).messages.create(**ask("still serving"))) == server.text


# ---- JSON shape --------------------------------------------------------------------------------------------------


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_deep_nesting_and_long_numbers_get_400_with_what_is_wrong(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server()

    def post(raw: bytes) -> tuple[int, str]:
        status, _, payload = raw_request(server, "POST", "/v1/messages", raw, HEADERS)
        return status, json.loads(payload).get("error", {}).get("message", "")

    request = json.dumps(ask("deep")).encode()[:-1]  # the object, open for one more member
    for depth in (100_000, 2_000, MAX_JSON_DEPTH + 1):
        raw = request + b', "metadata": {"x": ' + b"[" * depth + b"]" * depth + b"}}"
        status, message = post(raw)
        assert status == 400 and f"nested more than {MAX_JSON_DEPTH} levels" in message, (depth, message)
    # as deep as the limit allows (the request object and metadata are two of its levels): served
    raw = request + b', "metadata": {"x": ' + json.dumps(_nested(MAX_JSON_DEPTH - 2)).encode() + b"}}"
    assert post(raw) == (200, "")

    digits = max_number_digits()
    assert digits == 4300  # what the suite reader applies: Python's own limit
    for number in (b"9" * 5000, b"-" + b"9" * 5000, b"1." + b"5" * 5000):
        status, message = post(request + b', "temperature": ' + number + b"}")
        assert status == 400 and "characters long; the limit is 4,300 digits" in message, message
        assert "sys." not in message
    assert post(request + b', "temperature": ' + b"9" * 4300 + b"}") == (200, "")  # as long as allowed
    assert server.responder_errors == []
    assert first_text(sdk(server).messages.create(**ask("still serving"))) == server.text


# ---- connections and deadlines -----------------------------------------------------------------------------------


def _closed_within(sock: socket.socket, seconds: float, trickle: bytes) -> float | None:
    """Send `trickle` one byte every 0.1 s until the server closes the connection (its seconds from now) or
    `seconds` pass (None)."""
    started = time.monotonic()
    sock.settimeout(0.1)
    for byte in (trickle * 100)[: int(seconds / 0.1)]:
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - started
        except TimeoutError:
            pass
        except OSError:
            return time.monotonic() - started
        try:
            sock.send(bytes([byte]))
        except OSError:
            return time.monotonic() - started
    return None


def test_slow_headers_and_slow_bodies_meet_absolute_deadlines(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(limits=ServerLimits(header_timeout=0.6, body_timeout=0.6))
    # a byte every 0.1 s does not keep a connection's headers open past their deadline
    with _connect(server) as sock:
        sock.sendall(b"POST /v1/messages HTTP/1.1\r\n")
        seconds = _closed_within(sock, 4.0, b"x-slow: yes ")
    assert seconds is not None and seconds < 2.0, seconds
    # nor a body's: that one gets 408
    with _connect(server) as sock:
        sock.sendall(_head("content-length: 1000"))
        started = time.monotonic()
        for _ in range(15):  # a byte every 0.1 s until the answer starts to arrive (1.5 s at most)
            if select.select([sock], [], [], 0.1)[0]:
                break
            sock.sendall(b" ")
        sock.settimeout(3.0)
        status, error = _status_and_error(_response(sock))
    assert status == 408 and "within 0.6 s" in error["error"]["message"]
    assert time.monotonic() - started < 2.5
    assert server.requests[-1].status == 408
    assert first_text(sdk(server).messages.create(**ask("still serving"))) == server.text


def _connection_threads() -> int:
    """The threads serving connections (of every server in this process)."""
    return sum(
        t.name.endswith("-connection") or "process_request_thread" in t.name for t in threading.enumerate()
    )


def test_connections_are_capped_and_slow_ones_do_not_hold_the_server(
    make_anthropic_server: MakeServer,
) -> None:
    server = make_anthropic_server(limits=ServerLimits(max_connections=4, header_timeout=0.5))
    before = _connection_threads()
    slow = [_connect(server) for _ in range(12)]
    open_ = list(slow)
    most = 0
    started = time.monotonic()
    while open_ and time.monotonic() - started < 6.0:  # a byte each 0.1 s on every connection still open
        for sock in list(open_):
            try:
                sock.send(b"P")
            except OSError:
                open_.remove(sock)
        for sock in select.select(open_, [], [], 0.1)[0]:
            try:
                ended = sock.recv(1) == b""
            except OSError:
                ended = True
            if ended:
                open_.remove(sock)
        most = max(most, _connection_threads() - before)
    for sock in slow:
        sock.close()
    assert most <= 4, most  # never more connections served at once than the cap
    assert open_ == []  # every slow connection was closed: 12 / 4 x 0.5 s, not held while bytes trickle in
    assert time.monotonic() - started < 4.0
    assert first_text(sdk(server).messages.create(**ask("served"))) == server.text


def test_idle_keep_alive_connections_make_room_at_the_cap(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(limits=ServerLimits(max_connections=2))
    body = json.dumps(ask("keep me")).encode()
    request = _head(f"content-length: {len(body)}") + body
    idle = [_connect(server) for _ in range(2)]
    for sock in idle:  # each serves a request, then waits for the next (keep-alive)
        sock.sendall(request)
        assert _response(sock).startswith(b"HTTP/1.1 200 ")
    started = time.monotonic()
    assert _exchange(server, request, timeout=5.0).startswith(b"HTTP/1.1 200 ")
    assert time.monotonic() - started < 2.0  # not the 30 s an idle connection may otherwise wait
    for sock in idle:
        sock.close()


# ---- the request log ---------------------------------------------------------------------------------------------


def test_the_request_log_keeps_a_bounded_tail(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server(limits=ServerLimits(log_requests=5, log_body=4 * KIB, log_bytes=10 * KIB))
    bodies = [json.dumps(ask(f"request {i}")).encode() for i in range(6)]
    big = json.dumps(ask("x" * 8 * KIB)).encode()
    for raw in [*bodies, big]:
        assert raw_request(server, "POST", "/v1/messages", raw, HEADERS)[0] == 200
    records = server.requests
    assert [r.index for r in records] == [2, 3, 4, 5, 6] and server.requests_dropped == 2
    assert records[0].body == ask("request 2") and records[0].body_digest is None
    assert records[-1].body is None and records[-1].status == 200  # too large to keep: its length and digest
    assert (records[-1].body_length, records[-1].body_digest) == (
        len(big),
        "sha256:" + hashlib.sha256(big).hexdigest(),
    )

    # the bytes kept, all requests together, stay under log_bytes: 3 KiB bodies, 3 of them at most
    middling = [json.dumps(ask(f"{i}" * 3 * KIB)).encode() for i in range(5)]
    for raw in middling:
        assert raw_request(server, "POST", "/v1/messages", raw, HEADERS)[0] == 200
    kept = [r for r in server.requests if r.body is not None]
    assert len(kept) == 3 and sum(r.body_length for r in kept) <= 10 * KIB
    assert [r.body for r in kept] == [json.loads(raw) for raw in middling[-3:]]
    server.clear_log()
    assert server.requests == []


def test_memory_held_by_the_log_stays_bounded(make_anthropic_server: MakeServer) -> None:
    """24 bodies of 3 MiB: the log kept all of them (72 MiB); now it keeps their digests."""
    server = make_anthropic_server()  # the default limits
    raw = json.dumps(ask("z" * 3 * KIB * KIB)).encode()
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(24):
            assert raw_request(server, "POST", "/v1/messages", raw, HEADERS)[0] == 200
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 8 * KIB * KIB, f"{held / KIB / KIB:.1f} MiB held"
    assert {r.body_digest for r in server.requests} == {"sha256:" + hashlib.sha256(raw).hexdigest()}


# ---- exposed binds and the command lines ---------------------------------------------------------------------------


def test_binding_beyond_loopback_is_told_apart() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert not reaches_beyond_loopback(host), host
    for host in ("0.0.0.0", "::", "", "192.0.2.7"):
        assert reaches_beyond_loopback(host), host
    assert LocalAnthropicServer().exposure_warning() is None
    warning = LocalAnthropicServer(host="0.0.0.0", port=8765).exposure_warning()
    assert warning is not None and "every network interface" in warning
    assert "port 8765" in warning and "any API key" in warning
    assert "no API key" in (LocalAnthropicServer(host="::", require_auth=False).exposure_warning() or "")


@pytest.fixture
def bind_loopback_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers asked for 0.0.0.0 bind 127.0.0.1 (tests never listen beyond this machine) and serve until the
    command's wait for Ctrl-C, which gets one at once."""
    bind = _http.HTTPServer.server_bind

    def server_bind(self: _http.HTTPServer) -> None:
        self.server_address = ("127.0.0.1", 0)
        bind(self)

    monkeypatch.setattr(_http.HTTPServer, "server_bind", server_bind)
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        if seconds == 3600:
            raise KeyboardInterrupt
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)


@pytest.mark.usefixtures("bind_loopback_instead")
def test_both_commands_warn_when_they_listen_beyond_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="evalkit")
    _serve.add_parser(parser.add_subparsers())
    assert _serve.run(parser.parse_args(["serve", "--host", "0.0.0.0", "--port", "0"])) == 0
    err = capsys.readouterr().err
    assert "evalkit serve: warning: listening on every network interface" in err and "any API key" in err
    assert _serve.run(parser.parse_args(["serve", "--port", "0"])) == 0
    assert "warning" not in capsys.readouterr().err

    assert main(["--host", "0.0.0.0", "--no-auth"]) == 0
    err = capsys.readouterr().err
    assert "python -m evalkit.testing.server: warning: listening on every network interface" in err
    assert "no API key" in err
    assert main([]) == 0
    assert "warning" not in capsys.readouterr().err


def test_max_body_and_max_connections_on_the_command_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert [parse_size(t) for t in ("1048576", "512KiB", "32MiB", "32m", "1GB", "2 k")] == [
        1048576,
        512 * KIB,
        32 * KIB * KIB,
        32 * KIB * KIB,
        10**9,
        2 * KIB,
    ]
    for bad in ("0", "-1", "lots", "1.5MiB", "3TB"):
        with pytest.raises(ValueError, match="number of bytes"):
            parse_size(bad)
    parser = argparse.ArgumentParser(prog="evalkit")
    _serve.add_parser(parser.add_subparsers())
    limits = _serve.build_server(
        parser.parse_args(["serve", "--max-body", "1KiB", "--max-connections", "3"])
    ).limits
    assert (limits.max_body, limits.max_connections) == (KIB, 3)
    assert _serve.build_server(parser.parse_args(["serve"])).limits == ServerLimits()
    for argv in (["--max-body", "0"], ["--max-body", "lots"], ["--max-connections", "0"]):
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args(["serve", *argv])
        assert exit_.value.code == 2
    assert "argument --max-connections: must be a whole number above 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--max-body", "none"])
    assert "must be a number of bytes" in capsys.readouterr().err
    with pytest.raises(ValueError, match="max_body"):
        ServerLimits(max_body=0)
    with pytest.raises(ValueError, match="header_timeout"):
        ServerLimits(header_timeout=float("nan"))


def test_a_lone_surrogate_in_a_request_is_answered_as_valid_json(make_anthropic_server: MakeServer) -> None:
    server = make_anthropic_server()
    raw = json.dumps(ask("hi")).replace(f'"{MODEL}"', '"\\ud800"').encode()
    status, _, payload = raw_request(server, "POST", "/v1/messages", raw, HEADERS)
    assert status == 200 and json.loads(payload)["model"] == "\ud800"
    assert server.responder_errors == []
