"""Number formatters shared by the terminal report, the HTML page and the gate: percentages, points, p values."""

from __future__ import annotations

import math
from typing import Any


def is_nan(x: Any) -> bool:
    """True for None and NaN: a number not known."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: Any, digits: int = 1) -> str:
    """A proportion as a percentage ("n/a" when unknown)."""
    return "n/a" if is_nan(x) else f"{100 * float(x):z.{digits}f}%"


def pts(x: Any, digits: int = 1) -> str:
    """A difference of proportions in percentage points, signed."""
    # "z": a change that rounds to zero reads +0.0, never -0.0
    return "n/a" if is_nan(x) else f"{100 * float(x):+z.{digits}f} pts"


def pval(p: Any) -> str:
    if is_nan(p):
        return "n/a"
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def money(x: Any) -> str:
    return "n/a" if is_nan(x) else f"${float(x):.4f}"


def secs(x: Any) -> str:
    if is_nan(x):
        return "n/a"
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def ci_pts(low: Any, high: Any) -> str:
    if is_nan(low) or is_nan(high):
        return "n/a"
    return f"{100 * low:+z.1f} to {100 * high:+z.1f} pts"
