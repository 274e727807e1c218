"""Intervals: the Interval type, Wilson's for one rate, Student's t for a mean, and differences of pass rates.

For a difference, Newcombe's square-and-add ("MOVER") construction combines the Wilson score interval of each
rate. For paired binary verdicts it is Newcombe's method 10 (Statistics in Medicine 17:2635-2650, 1998), whose
correlation term phi is shrunk towards zero by n/2 in ``ad - bc`` so that a table of concordant pairs does not
collapse the interval. Every interval lies in [-1, 1], contains the point estimate and has positive width when
n > 0. Each function returns None where no interval is defined (no trials, an empty table).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from evalkit.stats._dist import binom_cdf_half, t_ppf, z_critical


class Interval(NamedTuple):
    """A confidence interval, ``low <= high``; a plain pair, so ``low, high = interval`` works."""

    low: float
    high: float


def _wilson(passes: float, n: float, confidence: float) -> Interval:
    """Wilson score interval for n > 0."""
    z = z_critical(confidence)
    p = passes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    half = z * math.sqrt(max(p * (1.0 - p), 0.0) / n + z2 / (4.0 * n * n)) / denom
    low = 0.0 if passes <= 0 else min(max(center - half, 0.0), 1.0)
    high = 1.0 if passes >= n else min(max(center + half, 0.0), 1.0)
    return Interval(low, high)


def wilson_interval(passes: float, n: float, *, confidence: float = 0.95) -> Interval | None:
    """Wilson score interval for passes out of n.

    Parameters
    ----------
    passes:
        Successes (may be fractional, e.g. a sum of per-case means).
    n:
        Trials.
    confidence:
        The confidence level, in (0, 1).

    Returns
    -------
    (low, high), inside [0, 1]; exactly 0 (1) at the bound when passes is 0 (n); None when n = 0.

    >>> tuple(round(x, 4) for x in wilson_interval(3, 10))
    (0.1078, 0.6032)
    >>> wilson_interval(0, 0) is None
    True
    """
    if n <= 0:
        return None
    return _wilson(passes, n, confidence)


def t_interval(mean: float, sd: float, n: int, *, confidence: float = 0.95) -> Interval | None:
    """Student-t interval for a mean of n values with sample standard deviation sd (ddof = 1).

    Parameters
    ----------
    mean, sd:
        The values' mean and standard deviation.
    n:
        How many values.
    confidence:
        The confidence level, in (0, 1).

    Returns
    -------
    ``mean -/+ t_{n-1} sd / sqrt(n)`` (the interval ``scipy.stats.ttest_1samp`` gives); the point itself when
    sd is 0; None for fewer than two values or an undefined sd.

    >>> tuple(round(x, 4) for x in t_interval(0.5, 1.0, 10))
    (-0.2154, 1.2154)
    """
    if n < 2 or math.isnan(sd) or math.isnan(mean):
        return None
    se = sd / math.sqrt(n)
    if se == 0.0:
        return Interval(mean, mean)
    t_crit = t_ppf(1.0 - (1.0 - confidence) / 2.0, n - 1)
    return Interval(mean - t_crit * se, mean + t_crit * se)


def _square_and_add(p1: float, p2: float, n1: float, n2: float, phi: float, confidence: float) -> Interval:
    """Interval for p1 - p2 from the Wilson intervals of p1 (n1 > 0 trials) and p2 (n2 > 0), correlation phi."""
    l1, u1 = _wilson(p1 * n1, n1, confidence)
    l2, u2 = _wilson(p2 * n2, n2, confidence)
    theta = p1 - p2
    below = (p1 - l1) ** 2 - 2.0 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2.0 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    low = theta - math.sqrt(max(below, 0.0))
    high = theta + math.sqrt(max(above, 0.0))
    return Interval(max(low, -1.0), min(high, 1.0))


def _newcombe_phi(cross: float, n: float, p1: float, p2: float) -> float:
    """Newcombe's phi from n * covariance (``ad - bc`` over n for a 2x2 table), shrunk as in method 10."""
    spread = p1 * (1.0 - p1) * p2 * (1.0 - p2)
    if spread <= 0.0:
        return 0.0
    # ad - bc = n * cross; Newcombe replaces it by ad - bc - n/2 when that is positive, by 0 when ad - bc
    # lies in [0, n/2], and keeps a negative value as it is.
    shrunk = cross - 0.5 if cross > 0.5 else (0.0 if cross >= 0.0 else cross)
    return max(-1.0, min(1.0, shrunk / (n * math.sqrt(spread))))


def newcombe_paired(
    both_pass: int, only_a: int, only_b: int, both_fail: int, *, confidence: float = 0.95
) -> Interval | None:
    """Newcombe's method 10 interval for rate_b - rate_a on paired pass/fail verdicts.

    For the first outcome's rate minus the second's, pass the second as A: ``newcombe_paired(both, only_second,
    only_first, neither)``.

    Parameters
    ----------
    both_pass, only_a, only_b, both_fail:
        The paired table: cases passing in both runs, only in A, only in B, in neither.
    confidence:
        Confidence level.

    Returns
    -------
    (low, high) for ``(only_b - only_a) / n``; None when the table is empty.

    >>> tuple(round(x, 4) for x in newcombe_paired(59, 16, 6, 80))
    (-0.1186, -0.0046)
    >>> tuple(round(x, 4) for x in newcombe_paired(0, 2, 0, 0))
    (-1.0, -0.07)
    >>> newcombe_paired(0, 0, 0, 0) is None
    True
    """
    if min(both_pass, only_a, only_b, both_fail) < 0:
        raise ValueError("counts must be non-negative")
    n = both_pass + only_a + only_b + both_fail
    if n == 0:
        return None
    p_b = (both_pass + only_b) / n
    p_a = (both_pass + only_a) / n
    cross = (both_pass * both_fail - only_a * only_b) / n
    return _square_and_add(p_b, p_a, n, n, _newcombe_phi(cross, n, p_b, p_a), confidence)


def paired_means_interval(
    means_a: Sequence[float], means_b: Sequence[float], *, confidence: float = 0.95
) -> Interval | None:
    """Newcombe's method 10 carried over to per-case pass rates (repeat means in [0, 1]) of two runs.

    The Wilson interval of each run's mean case rate is drawn at n cases (a mean of [0, 1] values varies no
    more than a 0/1 value of the same mean, so this is conservative), and phi is the cases' covariance over
    the Bernoulli bound with Newcombe's shrinkage. On 0/1 means it is exactly :func:`newcombe_paired`.

    Parameters
    ----------
    means_a, means_b:
        Per-case pass rates of runs A and B, aligned case by case.
    confidence:
        Confidence level.

    Returns
    -------
    (low, high) for mean(means_b) - mean(means_a); None for no cases.

    >>> tuple(round(x, 4) for x in paired_means_interval([1.0, 1.0], [0.0, 0.0]))
    (-1.0, -0.07)
    >>> low, high = paired_means_interval([0.5, 1.0, 0.0], [0.5, 1.0, 0.0])
    >>> low < 0.0 < high
    True
    """
    if len(means_a) != len(means_b):
        raise ValueError("means_a and means_b must hold one value per shared case")
    n = len(means_a)
    if n == 0:
        return None
    p_a = math.fsum(means_a) / n
    p_b = math.fsum(means_b) / n
    cross = math.fsum((a - p_a) * (b - p_b) for a, b in zip(means_a, means_b, strict=True))
    return means_interval(p_a, p_b, cross, n, confidence)


def means_interval(p_a: float, p_b: float, cross: float, n: int, confidence: float) -> Interval | None:
    """:func:`paired_means_interval` from the mean rates and the sum of cross-deviations of n cases."""
    if n <= 0:
        return None
    return _square_and_add(p_b, p_a, n, n, _newcombe_phi(cross, n, p_b, p_a), confidence)


def independent_interval(
    p1: float, n1: float, p2: float, n2: float, *, confidence: float = 0.95
) -> Interval | None:
    """Newcombe's hybrid score interval (method 10 of the unpaired paper) for p1 - p2 of independent samples.

    Parameters
    ----------
    p1, n1:
        The first rate and its (effective) sample size.
    p2, n2:
        The second rate and its (effective) sample size.
    confidence:
        Confidence level.

    Returns
    -------
    (low, high), inside [-1, 1]; None when either sample is empty.

    >>> tuple(round(x, 4) for x in independent_interval(0.9, 100, 0.6, 50))
    (0.1555, 0.4453)
    """
    if not n1 > 0 or not n2 > 0 or math.isnan(p1) or math.isnan(p2):
        return None
    return _square_and_add(p1, p2, n1, n2, 0.0, confidence)


def min_discordant_for_significance(*, alpha: float = 0.05) -> int:
    """The fewest discordant pairs with which McNemar's exact test can reach p < alpha at all.

    With m discordant pairs the smallest exact two-sided p is 2 / 2^m (every flip one way); below this count
    no paired comparison of pass/fail verdicts can be significant, whatever its interval says.

    Parameters
    ----------
    alpha:
        Two-sided significance level, in (0, 1).

    Returns
    -------
    The smallest m with 2 P(X <= 0) < alpha for X ~ Bin(m, 1/2).

    >>> min_discordant_for_significance()
    6
    >>> min_discordant_for_significance(alpha=0.01)
    8
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    m = 1
    while min(1.0, 2.0 * binom_cdf_half(0, m)) >= alpha:
        m += 1
    return m
