"""What the server takes from a client: body size, JSON shape, connections, deadlines, and what its log keeps."""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import sys
from dataclasses import dataclass
from typing import Any

from evalkit.testing.server._api_errors import _RequestError

__all__ = [
    "MAX_JSON_DEPTH",
    "ServerLimits",
    "decode_json",
    "max_number_digits",
    "parse_size",
    "reaches_beyond_loopback",
]

MAX_JSON_DEPTH = 512
"""The deepest nesting of arrays and objects a request body may have. Python's parser (and the suite reader, which
refuses where it stops) gives up near the interpreter's recursion limit, about 1,000 levels; the server stops well
before it, so that everything it does with an accepted body (token estimates, rules, the judge) can walk it."""

_MIB = 1024 * 1024


@dataclass(frozen=True)
class ServerLimits:
    """What the server accepts and keeps; every field is a hard cap.

    Args:
        max_body: the largest request body, in bytes; a larger one is answered 413 ``request_too_large`` (told by
            ``Content-Length`` before it is read, or by the running total of a chunked body). The API's own
            limit for the Messages endpoints is 32 MB.
        max_connections: the most connections served at once; more wait, unaccepted, until one ends (an idle
            keep-alive connection is closed to make room).
        header_timeout: seconds a new connection has to send its first request's headers, and a later request
            on a keep-alive connection from its first byte to the end of its headers; a slower connection is
            closed. An absolute deadline: bytes that trickle in do not extend it.
        body_timeout: seconds from the end of the headers to the end of the body; a slower body is answered 408.
        idle_timeout: seconds a keep-alive connection may wait for its next request (and a reply may wait for the
            client to take it).
        log_requests: the most requests the request log keeps (the newest; older ones are dropped).
        log_bytes: the most body bytes the request log keeps, all requests together.
        log_body: the largest body the log keeps as received; a larger one is kept as its length and SHA-256.
    """

    max_body: int = 32 * _MIB
    max_connections: int = 256
    header_timeout: float = 10.0
    body_timeout: float = 60.0
    idle_timeout: float = 30.0
    log_requests: int = 10_000
    log_bytes: int = 64 * _MIB
    log_body: int = 1 * _MIB

    def __post_init__(self) -> None:
        for name in ("max_body", "max_connections", "log_requests", "log_bytes", "log_body"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}: must be a whole number above 0, got {value!r}")
        for name in ("header_timeout", "body_timeout", "idle_timeout"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not value > 0:  # (also refuses nan)
                raise ValueError(f"{name}: must be a number of seconds above 0, got {value!r}")


_SIZE = re.compile(r"(\d+)\s*(|k|kb|kib|m|mb|mib|g|gb|gib)", re.IGNORECASE)
_UNITS = {"": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "k": 1024, "m": _MIB, "g": 1024 * _MIB}


def parse_size(text: str) -> int:
    """A byte count as written on a command line: ``33554432``, ``32MiB``, ``32M`` (binary), ``32MB`` (decimal)."""
    match = _SIZE.fullmatch(text.strip())
    if match is None or int(match.group(1)) < 1:
        raise ValueError(f"must be a number of bytes above 0, such as 1048576, 512KiB or 32MiB; got {text!r}")
    unit = match.group(2).lower().replace("ib", "")
    return int(match.group(1)) * _UNITS[unit]


def max_number_digits() -> int:
    """The most digits a number in a request body may have: Python's limit on reading an integer (4,300 by
    default), the limit the suite reader applies to cases; when that is switched off, its default."""
    return sys.get_int_max_str_digits() or sys.int_info.default_max_str_digits


class _NumberTooLong(Exception):
    def __init__(self, characters: int) -> None:
        self.characters = characters


def _integer(text: str) -> int:
    if len(text) - text.startswith("-") > max_number_digits():
        raise _NumberTooLong(len(text))
    return int(text)


def _real(text: str) -> float:
    if len(text) > max_number_digits():
        raise _NumberTooLong(len(text))
    return float(text)


# one decoder for every request (``json.loads`` with hooks would build one per call)
_DECODER = json.JSONDecoder(parse_int=_integer, parse_float=_real)


def decode_json(raw: bytes) -> Any:
    """A request body's JSON, or a 400 that says what is wrong: not JSON, nested deeper than ``MAX_JSON_DEPTH``,
    or a number longer than ``max_number_digits()``."""
    try:
        # (what json.loads does with bytes: UTF-8, -16 or -32, told by the first bytes)
        value = _DECODER.decode(raw.decode(json.detect_encoding(raw), "surrogatepass"))
    except _NumberTooLong as exc:
        raise _RequestError(
            400,
            f"request body has a number {exc.characters:,} characters long; the limit is "
            f"{max_number_digits():,} digits: send a value that long as a string",
        ) from None
    except RecursionError:  # deeper than the parser itself goes
        raise _too_deep() from None
    except ValueError as exc:  # (UnicodeDecodeError included)
        raise _RequestError(400, f"request body is not valid JSON: {exc}") from None
    # (a body with fewer brackets than the limit cannot be deeper: the usual case costs two counts)
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and _deeper_than(value, MAX_JSON_DEPTH):
        raise _too_deep()
    return value


def _too_deep() -> _RequestError:
    return _RequestError(
        400,
        f"request body is nested more than {MAX_JSON_DEPTH} levels deep (arrays and objects); "
        "the local server refuses deeper JSON",
    )


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels in `value` (walked without recursion)."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def reaches_beyond_loopback(host: str) -> bool:
    """Whether binding `host` listens beyond this machine (``0.0.0.0``, ``::``, a LAN address); False for loopback
    addresses, and for a host that cannot be resolved (binding it fails and says so)."""
    try:
        found = socket.getaddrinfo(host or None, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return False
    addresses = {str(info[4][0]).split("%", 1)[0] for info in found}
    return not all(ipaddress.ip_address(address).is_loopback for address in addresses)
