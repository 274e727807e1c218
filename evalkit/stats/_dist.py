"""Distribution functions behind the statistics: normal, Student t, chi-square and binomial tails.

The normal quantile and the chi-square(1) tail have exact closed forms in the standard library
(``statistics.NormalDist.inv_cdf``, ``math.erfc``), so a run's summary never imports scipy (0.3-0.5 s of every
command). Student's t comes from ``scipy.special``, imported on first use. The binomial tail is summed in exact
integers up to n = 5,000 and taken from scipy's ``bdtr`` above; both stay exact far into the tail where
``scipy.stats.binom.cdf`` underflows to 0 (e.g. P(X <= 33) for X ~ Bin(1075, 1/2) is 1.9e-261).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from types import ModuleType

_STANDARD_NORMAL = NormalDist()
_EXACT_BINOMIAL_MAX_N = 5_000


def _special() -> ModuleType:
    import scipy.special

    return scipy.special


def z_critical(confidence: float) -> float:
    """Two-sided normal critical value for a confidence level.

    Parameters
    ----------
    confidence:
        The confidence level, in (0, 1).

    Returns
    -------
    z with P(|Z| <= z) = confidence for a standard normal Z.

    >>> round(z_critical(0.95), 4)
    1.96
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return normal_ppf(1.0 - (1.0 - confidence) / 2.0)


def normal_ppf(q: float) -> float:
    """Quantile of the standard normal distribution.

    Parameters
    ----------
    q:
        A probability in (0, 1).

    Returns
    -------
    The value below which a standard normal falls with probability q.

    >>> round(normal_ppf(0.8), 4)
    0.8416
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q}")
    return _STANDARD_NORMAL.inv_cdf(q)


def t_sf(t: float, df: float) -> float:
    """Survival function P(T > t) of Student's t with df degrees of freedom.

    Parameters
    ----------
    t:
        The point.
    df:
        Degrees of freedom, > 0.

    Returns
    -------
    P(T > t).

    >>> round(t_sf(2.0, 3), 4)
    0.0697
    """
    if df <= 0:
        raise ValueError(f"df must be positive, got {df}")
    if math.isnan(t):
        return math.nan
    # stdtr(df, -t) = P(T < -t) = P(T > t), computed without the cancellation of 1 - cdf.
    return float(_special().stdtr(df, -t))


def t_ppf(q: float, df: float) -> float:
    """Quantile of Student's t with df degrees of freedom.

    Parameters
    ----------
    q:
        A probability in (0, 1).
    df:
        Degrees of freedom, > 0.

    Returns
    -------
    t with P(T <= t) = q.

    >>> round(t_ppf(0.975, 9), 4)
    2.2622
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be in (0, 1), got {q}")
    if df <= 0:
        raise ValueError(f"df must be positive, got {df}")
    return float(_special().stdtrit(df, q))


def chi2_1_sf(x: float) -> float:
    """Survival function of chi-square with one degree of freedom.

    Parameters
    ----------
    x:
        The statistic (negative values count as 0).

    Returns
    -------
    P(X > x) for X ~ chi-square(1).

    >>> round(chi2_1_sf(3.841458820694124), 6)
    0.05
    """
    # P(chi2_1 > x) = P(|Z| > sqrt(x)) = erfc(sqrt(x / 2))
    return math.erfc(math.sqrt(max(x, 0.0) / 2.0))


def binom_cdf_half(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): the tail behind McNemar's exact test.

    Parameters
    ----------
    k:
        The count.
    n:
        The number of trials.

    Returns
    -------
    The lower tail, accurate to full relative precision even far out (no underflow to 0 above 1e-308).

    >>> binom_cdf_half(1, 4)
    0.3125
    >>> f"{binom_cdf_half(33, 1075):.4e}"
    '1.9454e-261'
    """
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n > _EXACT_BINOMIAL_MAX_N:
        return float(_special().bdtr(k, n, 0.5))
    total = term = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return total / (1 << n)  # int / int rounds correctly however large both are


def binom_pmf_half(k: int, n: int) -> float:
    """P(X = k) for X ~ Binomial(n, 1/2).

    Parameters
    ----------
    k:
        The count.
    n:
        The number of trials.

    Returns
    -------
    The probability mass at k (0 outside 0..n).

    >>> binom_pmf_half(2, 4)
    0.375
    """
    if not 0 <= k <= n:
        return 0.0
    return math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2.0))
