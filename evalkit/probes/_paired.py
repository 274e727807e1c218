"""Paired proportions: the difference of two rates on the same items, with Newcombe's interval and McNemar's p.

Each item gives two yes/no outcomes x1, x2 (say: passed when padded, passed when not). With the
2×2 counts a (both yes), b (x1 only), c (x2 only), d (neither) the difference of the two rates
is (b - c) / n, and only the discordant items b and c carry evidence about it. The statistics are
`evalkit.stats`' (`newcombe_paired`, `mcnemar`, `mcnemar_cases_needed`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from evalkit.errors import EvalkitError
from evalkit.stats import Interval, mcnemar, newcombe_paired


class PairedDifference(BaseModel):
    """Difference of two paired rates, rate1 - rate2, with Newcombe's interval and McNemar's exact p."""

    model_config = ConfigDict(frozen=True)
    n: int
    rate1: float | None
    rate2: float | None
    difference: float | None
    ci: Interval | None
    discordant: int
    mcnemar_p: float | None


def difference_interval(a: int, b: int, c: int, d: int, *, confidence: float) -> Interval | None:
    """Newcombe's interval for (b - c) / n, the first outcome's rate minus the second's; None with no items."""
    # newcombe_paired gives B minus A: the first outcome is B, so its only-yes count b goes in as only_b
    return newcombe_paired(a, c, b, d, confidence=confidence)


def mcnemar_exact_p(b: int, c: int) -> float | None:
    """McNemar's exact two-sided p on the discordant counts; None when there are none (nothing to test)."""
    return None if b + c == 0 else mcnemar(c, b)[0]


def paired_difference(x1: list[bool], x2: list[bool], *, confidence: float = 0.95) -> PairedDifference:
    """Rate of `x1` minus rate of `x2` on the same items, with Newcombe's interval and McNemar's p.

    Parameters
    ----------
    x1, x2:
        Aligned yes/no outcomes, one pair per item.
    confidence:
        Coverage of the interval.

    Returns
    -------
    A `PairedDifference`.
    """
    if len(x1) != len(x2):
        raise EvalkitError(f"paired outcomes differ in length ({len(x1)} and {len(x2)}); align them by item")
    a = sum(1 for u, v in zip(x1, x2, strict=True) if u and v)
    b = sum(1 for u, v in zip(x1, x2, strict=True) if u and not v)
    c = sum(1 for u, v in zip(x1, x2, strict=True) if v and not u)
    n = len(x1)
    return PairedDifference(
        n=n,
        rate1=(a + b) / n if n else None,
        rate2=(a + c) / n if n else None,
        difference=(b - c) / n if n else None,
        ci=difference_interval(a, b, c, n - a - b - c, confidence=confidence),
        discordant=b + c,
        mcnemar_p=mcnemar_exact_p(b, c),
    )
