"""The one JSONL codec: every JSONL file evalkit writes, its own readers read back, and every reader has the same
limits.

Written: one JSON object per line, UTF-8, with U+2028, U+2029 and U+0085 escaped (Python's and other readers'
``splitlines`` break lines there) and lone surrogates escaped (UTF-8 cannot encode them). Read: lines end at
"\n" only; a byte order mark at the start of the file is taken off (Windows editors write one); a lone
surrogate (an escape like "\\ud800" with no pair) reads as U+FFFD; each line is decoded strictly (no duplicate keys, no NaN or Infinity) within limits on nesting and on the digits of a number,
and what is refused is said with its line.
"""

from __future__ import annotations

import json
import re
from typing import Any

_UNSAFE = re.compile("[\u0085\u2028\u2029\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE = re.compile("[\ud800-\udfff]")


def _no_lone_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate in its strings (keys too) replaced by U+FFFD: no UTF-8 writer, and no
    frame, can hold one."""
    if isinstance(value, str):
        return _LONE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_no_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_no_lone_surrogates(k): _no_lone_surrogates(v) for k, v in value.items()}
    return value


def encode_line(obj: Any) -> str:
    """`obj` as one JSON line (without its newline) that any JSONL reader splits correctly."""
    text = json.dumps(obj, ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def strip_bom(text: str) -> str:
    """`text` without a byte order mark at its start."""
    return text[1:] if text.startswith("\ufeff") else text


def split_lines(text: str) -> list[str]:
    """The lines of a JSONL text: split at "\n" only (a "\r" before it is dropped), a leading BOM taken off."""
    return [line.removesuffix("\r") for line in strip_bom(text).split("\n")]


class _LineError(ValueError):
    def __init__(self, field: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.field, self.message, self.hint = field, message, hint


DEEP_HINT = "flatten it: this is data, not a parser test (nesting up to a few hundred levels is fine)"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _LineError(
                key,
                f"the key {key!r} appears twice in one object, and JSON keeps only the last",
                "remove one of them",
            )
        obj[key] = value
    return obj


def _no_constant(name: str) -> Any:
    raise _LineError(
        "(json)",
        f"{name} is not JSON (Python writes it, JSON parsers disagree on it)",
        "write a number, or null, or the value as a string",
    )


def decode_line(text: str) -> tuple[Any, tuple[str, str, str] | None]:
    """One JSONL line decoded strictly: (value, None), or (None, (field, what is wrong, what to do))."""
    if text.startswith("\ufeff"):  # at the start of a file it is taken off before: here it is inside one
        return None, ("(file)", "a byte order mark (U+FEFF) starts this line", "remove it")
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)
        if _SURROGATE_ESCAPE.search(text):
            value = _no_lone_surrogates(value)
        return value, None
    except _LineError as exc:
        return None, (exc.field, exc.message, exc.hint)
    except json.JSONDecodeError as exc:
        return None, ("(json)", f"invalid JSON: {exc.msg} at column {exc.colno}", "one object per line")
    except RecursionError:
        return None, ("(json)", "nested too deeply to read", DEEP_HINT)
    except ValueError as exc:  # Python's limit on the digits of an integer
        return None, (
            "(json)",
            f"a number too long to read ({str(exc).split(';')[0]})",
            "write it as a string, or round it: no check compares thousands of digits",
        )
