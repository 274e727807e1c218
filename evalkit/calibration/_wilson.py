"""Wilson score interval for one proportion."""

from __future__ import annotations

import math

from scipy.stats import norm


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for `successes` out of `n`.

    Parameters
    ----------
    successes, n:
        Counts; ``0 <= successes <= n``.
    confidence:
        Coverage of the interval.

    Returns
    -------
    (low, high), or None when n is 0.
    """
    if n == 0:
        return None
    z = float(norm.ppf(1.0 - (1.0 - confidence) / 2.0))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # clamp the rounding at the ends: the exact interval reaches 0 (or 1) when there are no successes (failures)
    return (
        0.0 if successes == 0 else max(0.0, centre - half),
        1.0 if successes == n else min(1.0, centre + half),
    )
