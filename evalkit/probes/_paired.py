"""Paired proportions: Newcombe's interval for a difference, McNemar's exact test, and the sample size.

Each item gives two yes/no outcomes x1, x2 (say: passed when padded, passed when not). With the
2×2 counts a (both yes), b (x1 only), c (x2 only), d (neither) the difference of the two rates
is (b - c) / n, and only the discordant items b and c carry evidence about it.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict
from scipy.stats import binomtest, norm

from evalkit.calibration import wilson_interval
from evalkit.errors import EvalkitError


class PairedDifference(BaseModel):
    """Difference of two paired rates, rate1 - rate2, with Newcombe's interval and McNemar's exact p."""

    model_config = ConfigDict(frozen=True)
    n: int
    rate1: float | None
    rate2: float | None
    difference: float | None
    ci: tuple[float, float] | None
    discordant: int
    mcnemar_p: float | None


def newcombe_paired(
    a: int, b: int, c: int, d: int, *, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Newcombe's (1998) method 10 interval for (b - c) / n: Wilson intervals of the two rates, combined.

    Parameters
    ----------
    a, b, c, d:
        Counts of items with both outcomes yes, only the first, only the second, neither.
    confidence:
        Coverage of the interval.

    Returns
    -------
    (low, high), or None when there are no items.
    """
    n = a + b + c + d
    if n == 0:
        return None
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_interval(a + b, n, confidence=confidence)  # type: ignore[misc]
    l2, u2 = wilson_interval(a + c, n, confidence=confidence)  # type: ignore[misc]
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    # Newcombe's correction: a positive cross-product is shrunk by n/2 (and never below zero)
    num = max(cross - n / 2, 0.0) if cross > 0 else float(cross)
    phi = num / math.sqrt(margins) if margins else 0.0
    theta = p1 - p2
    low = theta - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    high = theta + math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return (max(-1.0, low), min(1.0, high))


def mcnemar_exact(b: int, c: int) -> float | None:
    """Two-sided exact McNemar p-value: a binomial test of b out of b + c at one half; None when b + c = 0."""
    if b + c == 0:
        return None
    return float(binomtest(min(b, c), b + c, 0.5).pvalue)


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
        ci=newcombe_paired(a, b, c, n - a - b - c, confidence=confidence),
        discordant=b + c,
        mcnemar_p=mcnemar_exact(b, c),
    )


def n_needed(effect: float, *, discordant: float, confidence: float = 0.95, power: float = 0.8) -> int:
    """Items needed to detect a paired difference `effect` with a two-sided McNemar test (Connor 1987).

    Parameters
    ----------
    effect:
        The difference of the paired rates to detect, (b - c) / n.
    discordant:
        Expected share of discordant items, (b + c) / n; at least abs(effect).
    confidence, power:
        One minus the test's significance level, and the chance of detecting the effect.

    Returns
    -------
    The number of items, rounded up.
    """
    if effect == 0:
        raise EvalkitError("an effect of 0 cannot be detected; give the smallest difference that matters")
    if not abs(effect) <= discordant <= 1:
        raise EvalkitError(f"discordant share {discordant} must lie between |effect| = {abs(effect)} and 1")
    za = float(norm.ppf(1 - (1 - confidence) / 2))
    zb = float(norm.ppf(power))
    n = (za * math.sqrt(discordant) + zb * math.sqrt(discordant - effect**2)) ** 2 / effect**2
    return math.ceil(n)
