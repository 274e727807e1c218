"""Opt-in normalisers for exact match: strip, casefold, whitespace, punctuation, numbers."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

_WS = re.compile(r"\s+")
# currency marks and spacing that people put around numbers; removed before parsing
_NUMBER_NOISE = re.compile(r"[\s\u00a0\u202f'’€$£¥₹]|(?i:\b(?:eur|usd|gbp|chf|jpy|sek|nok|dkk|pln)\b)")
_THOUSANDS_COMMA = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_THOUSANDS_DOT = re.compile(r"^[+-]?\d{1,3}(\.\d{3})+(,\d+)?$")
_PLAIN = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_DECIMAL_COMMA = re.compile(r"^[+-]?\d+,\d+$")


def parse_number(value: Any) -> Decimal | None:
    """Read a number written as 1240, "1240.00", "1,240.00", "1.240,00", "€ 1 240,00"; None if it is not one.

    With a single separator and three digits after it, a comma groups thousands ("1,240") and so do repeated dots
    ("1.240.000"); a lone dot is a decimal point ("1.240" is 1.24), a lone comma otherwise a decimal comma ("12,5").
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    if not isinstance(value, str):
        return None
    text = _NUMBER_NOISE.sub("", unicodedata.normalize("NFKC", value))
    if text.startswith("(") and text.endswith(")"):
        text = "-" + text[1:-1]
    if not text:
        return None
    if _PLAIN.match(text):
        cleaned = text
    elif _THOUSANDS_COMMA.match(text):
        cleaned = text.replace(",", "")
    elif _THOUSANDS_DOT.match(text) and (text.count(".") > 1 or "," in text):
        cleaned = text.replace(".", "").replace(",", ".")
    elif _DECIMAL_COMMA.match(text):
        cleaned = text.replace(",", ".")
    else:
        return None
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        return None


def normalize(value: Any, steps: Sequence[str]) -> Any:
    """Apply normalisers to a value; containers are normalised item by item."""
    if not steps:
        return value
    if isinstance(value, dict):
        return {k: normalize(v, steps) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v, steps) for v in value]
    if "numbers" in steps:
        number = parse_number(value)
        if number is not None:
            return number  # Decimal equality ignores trailing zeros: 1240 == 1240.00
    if isinstance(value, str):
        if "punctuation" in steps:
            # "Blue Heron Software, LLC" and "Blue Heron Software LLC" name the same supplier
            value = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in value)
            value = _WS.sub(" ", value).strip()
        if "strip" in steps:
            value = value.strip()
        if "whitespace" in steps:
            value = _WS.sub(" ", value).strip()
        if "casefold" in steps:
            value = value.casefold()
    return value
