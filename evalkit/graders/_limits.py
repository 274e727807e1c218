"""Time limits for grading: a check past its limit is that check's error, and the run goes on.

Patterns written in a case (regex checks, citation patterns) run on the `regex` engine, whose matcher takes a
timeout; its default syntax (VERSION0) is the `re` module's, so a pattern means what it meant under `re`.
"""

from __future__ import annotations

import functools
from typing import Any

import regex

from evalkit.errors import CheckTimeout
from evalkit.graders._base import GradingContext

DEFAULT_CHECK_TIMEOUT_S: float = GradingContext.check_timeout_s
_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE}
LIMIT_HINT = "raise check_timeout_s in suite.toml if the check is right but slow"


def seconds(limit: float) -> str:
    """A limit as people write it: "2 s", "0.5 s"."""
    return f"{limit:g} s"


@functools.lru_cache(maxsize=512)  # a suite's few patterns, each looked up again for every case it grades
def compile_pattern(pattern: str, flags: str = "") -> Any:
    """Compile a case's pattern on the engine grading uses (regex, re-compatible syntax)."""
    value = 0
    for f in flags:
        value |= _FLAGS[f]
    return regex.compile(pattern, value)


def _timeout(limit: float) -> float | None:
    return limit if limit > 0 else None  # 0: no limit


def search(pattern: str, text: str, *, flags: str = "", limit: float, what: str = "regex check") -> Any:
    """`re.search` with a time limit; past it, a CheckTimeout that says what to do."""
    try:
        return compile_pattern(pattern, flags).search(text, timeout=_timeout(limit))
    except TimeoutError:
        raise CheckTimeout(_too_slow(what, pattern, limit, len(text))) from None


def findall(pattern: str, text: str, *, limit: float, what: str = "citation pattern") -> list[Any]:
    """`re.findall` with a time limit."""
    try:
        return list(compile_pattern(pattern).findall(text, timeout=_timeout(limit)))
    except TimeoutError:
        raise CheckTimeout(_too_slow(what, pattern, limit, len(text))) from None


def _too_slow(what: str, pattern: str, limit: float, length: int) -> str:
    return (
        f"{what} timed out after {seconds(limit)}: simplify the pattern /{pattern}/ (nested repeats such as "
        f"(a+)+ or (a|a)* can backtrack without end on text that almost matches; this output has {length} "
        f"characters), or {LIMIT_HINT}"
    )
