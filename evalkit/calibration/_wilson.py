"""Wilson score interval for one proportion, as the judge-trust figures report it (None when nothing was counted)."""

from __future__ import annotations


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for `successes` out of `n` (``evalkit.stats.wilson_interval``).

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
    from evalkit.stats import wilson_interval as interval

    return None if n == 0 else interval(successes, n, confidence=confidence)
