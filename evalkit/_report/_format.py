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


def pts(x: Any, digits: int = 1, *, signed: bool = True) -> str:
    """A difference of proportions in percentage points: signed for a change, unsigned (``signed=False``) for a
    spread such as a standard deviation, which has no direction."""
    # "z": a change that rounds to zero reads +0.0, never -0.0
    sign = "+" if signed else ""
    return "n/a" if is_nan(x) else f"{100 * float(x):{sign}z.{digits}f} pts"


def pval(p: Any, *, alpha: float | None = None, digits: int = 2) -> str:
    """A p-value with `digits` significant digits, or as many more as it takes for the printed value to stand on
    the same side of every level a reader may hold it against as the p-value itself.

    The levels are `alpha` and every number of one significant digit (0.05, 0.01, 0.001, 0.2, ...): 0.0498
    prints 0.0498, not 0.05, which would read as not below 0.05.

    >>> pval(0.0498), pval(0.0502), pval(0.375, digits=3), pval(0.000999), pval(0.0249, alpha=0.025)
    ('0.0498', '0.05', '0.375', '9.99e-04', '0.0249')
    """
    if is_nan(p):
        return "n/a"
    p = float(p)
    text = ""
    for shown_digits in range(digits, 18):
        text = f"{p:.{shown_digits}g}" if p >= 0.001 else f"{p:.{shown_digits - 1}e}"
        if _same_side(float(text), p, alpha):
            break
    return text


def _same_side(shown: float, p: float, alpha: float | None) -> bool:
    """Whether `shown` compares with alpha and with every one-significant-digit level as `p` does."""
    if alpha is not None and (shown < alpha) != (p < alpha):
        return False
    # Rounding carries p across a level only by landing on it (a level strictly between p and its rounding
    # would be a closer rounding). Landing on it from below reads as "not below the level"; from above, as
    # "not below" too, which is true.
    on_level = float(f"{shown:.0e}") == shown
    return not (on_level and p < shown)


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
