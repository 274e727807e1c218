"""Read one JSON document (baseline.json, calibration.json, manifest.json) with the JSONL codec's rules: no
duplicate keys, no NaN, limits on nesting and digits, a leading byte order mark taken off; and say a newer
format is newer.

The digest of a record is over its canonical JSON without the digest itself: an edit by hand, which cannot
recompute it, is told from a file evalkit wrote.
"""

from __future__ import annotations

import itertools
import json
import json.decoder
import json.scanner
import re
from typing import Any

from evalkit._hashing import canonical_json, sha256_hex
from evalkit._records._codec import decode_line, strip_bom
from evalkit.errors import EvalkitError

DIGEST_KEY = "digest"


def decode_document(text: str, where: str) -> Any:
    """The JSON value of `text`, decoded strictly; what is refused raises an EvalkitError naming `where`."""
    value, bad = decode_line(strip_bom(text))
    if bad is None:
        return value
    field, message, hint = bad
    if "appears twice" in message:
        line = _second_line_of(strip_bom(text), field)
        if line is not None:
            message += f" (again at line {line})"
    if message.startswith("invalid JSON: "):
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:  # the codec speaks of one line: say where in the document
            message = f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
            hint = "write it again with evalkit"
        except (ValueError, RecursionError):
            pass
    raise EvalkitError(f"{where}: {message}; {hint}")


def _second_line_of(text: str, key: str) -> int | None:
    """The line where `key` is written the second time in the first object that has it twice (None if it cannot
    be told). Read again by the pure-Python scanner, whose objects say where they start."""
    starts: list[int] = []

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
        strict, scan_once, object_hook, _pairs_hook, *rest = args

        def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            if not starts and [k for k, _ in pairs].count(key) > 1:
                starts.append(s_and_end[1])
            return dict(pairs)

        return json.decoder.JSONObject(s_and_end, strict, scan_once, object_hook, pairs_hook, *rest)  # type: ignore[attr-defined]

    decoder = json.JSONDecoder()
    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        decoder.decode(text)
    except (ValueError, RecursionError):
        return None
    if not starts:
        return None
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    found = list(itertools.islice(pattern.finditer(text, starts[0]), 2))
    return text.count("\n", 0, found[1].start()) + 1 if len(found) == 2 else None


def check_format_version(found: Any, reads_up_to: int, where: str) -> None:
    """Refuse a format version this evalkit does not know, saying that a newer evalkit wrote it."""
    if isinstance(found, int) and not isinstance(found, bool) and found > reads_up_to:
        raise EvalkitError(
            f"{where}: written by a newer evalkit (format {found}; this evalkit reads up to {reads_up_to}): "
            "upgrade evalkit"
        )


def content_digest(data: dict[str, Any]) -> str:
    """sha256 of `data`'s canonical JSON, its own ``digest`` key left out."""
    return "sha256:" + sha256_hex(canonical_json({k: v for k, v in data.items() if k != DIGEST_KEY}))


def digest_problem(data: dict[str, Any]) -> str | None:
    """Why `data` does not match the digest it carries (None: it matches, or carries none)."""
    stored = data.get(DIGEST_KEY)
    if stored is None:
        return None
    if stored != content_digest(data):
        return "its content does not match its digest: it was edited after evalkit wrote it"
    return None
