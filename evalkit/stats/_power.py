"""Power: the minimum detectable effect of a design, the cases a target effect needs, and both from runs."""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from evalkit.errors import EvalkitError
from evalkit.stats._dist import normal_ppf
from evalkit.stats._frames import float_or_nan, require_columns, require_verdicts
from evalkit.stats._paired import case_means, paired_frame


def _z_sum(alpha: float, power: float) -> float:
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("alpha and power must be in (0, 1)")
    return normal_ppf(1.0 - alpha / 2.0) + normal_ppf(power)


def _pair_variance(omega2: float, s2_a: float, s2_b: float, k_a: float, k_b: float) -> float:
    if min(omega2, s2_a, s2_b) < 0 or k_a < 1 or k_b < 1:
        raise ValueError("variances must be >= 0 and repeats >= 1")
    return omega2 + s2_a / k_a + s2_b / k_b


def minimum_detectable_effect(
    n: int,
    omega2: float,
    *,
    s2_a: float = 0.0,
    s2_b: float = 0.0,
    k_a: float = 1,
    k_b: float = 1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    """Smallest true difference a two-sided test at ``alpha`` detects with ``power`` on n cases.

    delta = (z_{1-alpha/2} + z_{power}) * sqrt((omega2 + s2_a/k_a + s2_b/k_b) / n), where omega2 is the
    variance across cases of the true paired difference and s2_a, s2_b the mean within-case variances of
    runs with k_a, k_b repeats.

    Parameters
    ----------
    n:
        Number of cases.
    omega2:
        Variance across cases of the true paired difference.
    s2_a, s2_b:
        Mean within-case variances of runs A and B.
    k_a, k_b:
        Repeats per case in runs A and B.
    alpha:
        Two-sided significance level.
    power:
        The chance of detecting a true difference of the returned size.

    Returns
    -------
    The minimum detectable effect, as a difference of proportions (inf for n <= 0).

    >>> round(minimum_detectable_effect(200, 0.05), 4)
    0.0443
    """
    if n <= 0:
        return math.inf
    return _z_sum(alpha, power) * math.sqrt(_pair_variance(omega2, s2_a, s2_b, k_a, k_b) / n)


def cases_needed(
    effect: float,
    omega2: float,
    *,
    s2_a: float = 0.0,
    s2_b: float = 0.0,
    k_a: float = 1,
    k_b: float = 1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    """Cases needed for :func:`minimum_detectable_effect` to reach ``effect`` (rounded up).

    Parameters
    ----------
    effect:
        The true difference to detect, > 0.
    omega2, s2_a, s2_b, k_a, k_b, alpha, power:
        As for :func:`minimum_detectable_effect`.

    Returns
    -------
    The smallest number of cases (at least 1) whose MDE is at most ``effect``.

    >>> cases_needed(0.05, 0.05)
    157
    """
    if effect <= 0:
        raise ValueError(f"effect must be positive, got {effect}")
    v = _pair_variance(omega2, s2_a, s2_b, k_a, k_b)
    n = (_z_sum(alpha, power) / effect) ** 2 * v
    # Guard against float noise pushing an exact integer just above itself.
    return max(1, math.ceil(n - 1e-9))


def mcnemar_cases_needed(effect: float, *, discordant: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Cases needed to detect a paired difference of two rates with a two-sided McNemar test (Connor 1987).

    ``n = (z_{1-alpha/2} sqrt(d) + z_{power} sqrt(d - effect^2))^2 / effect^2`` for a discordant share d:
    the test sees only the discordant cases, so d sets the sample as much as the effect does.

    Parameters
    ----------
    effect:
        The difference of the paired rates to detect, ``(only_b - only_a) / n``.
    discordant:
        Expected share of discordant cases, ``(only_a + only_b) / n``; at least ``abs(effect)``.
    alpha:
        Two-sided significance level.
    power:
        The chance of detecting a true difference of that size.

    Returns
    -------
    The number of cases, rounded up.

    >>> mcnemar_cases_needed(0.1, discordant=0.2)
    155
    """
    if effect == 0:
        raise EvalkitError("an effect of 0 cannot be detected; give the smallest difference that matters")
    if not abs(effect) <= discordant <= 1:
        raise EvalkitError(f"discordant share {discordant} must lie between |effect| = {abs(effect)} and 1")
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("alpha and power must be in (0, 1)")
    za = normal_ppf(1 - alpha / 2)
    zb = normal_ppf(power)
    n = (za * math.sqrt(discordant) + zb * math.sqrt(discordant - effect**2)) ** 2 / effect**2
    return math.ceil(n)


@dataclass(frozen=True)
class PowerPlan:
    """Variance components measured from runs and the MDE they imply.

    ``method`` is "paired" (omega2 from per-case differences of run means) or "unpaired" (no baseline:
    omega2 = 2 p(1-p), s2 terms 0).
    """

    method: str
    n: int
    omega2: float
    s2_a: float
    s2_b: float
    k_a: float
    k_b: float
    var_diff: float
    alpha: float
    power: float
    mde: float


def estimate_mde(
    verdicts: pl.DataFrame,
    run_a: str,
    run_b: str | None = None,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    n: int | None = None,
    k_a: float | None = None,
    k_b: float | None = None,
) -> PowerPlan:
    """Measure the variance terms from runs and return the MDE for n cases with k_a, k_b repeats.

    Paired (``run_b`` given): ``var_diff`` is the variance of per-case differences of repeat means, which
    already holds the within-case noise; omega2 removes it, ``max(var_diff - s2_a/K_a - s2_b/K_b, 0)``
    (K the harmonic mean of observed repeats), so planning with other k does not count it twice. At the
    observed design the MDE is (z_{1-alpha/2} + z_power) times the paired SE.
    Unpaired fallback (no baseline): omega2 = 2 p(1-p) for the mean case pass rate p of ``run_a``, the
    variance of the difference of two independent runs of one repeat; it already holds within-case noise
    at k = 1, so s2 terms are 0 and the result is conservative for k > 1.
    Defaults: n, k_a, k_b as observed.

    Parameters
    ----------
    verdicts:
        Case verdicts (columns run_id, case_id, slice, status).
    run_a:
        The reference run (the only run, unpaired).
    run_b:
        The run compared with it; None for the unpaired fallback.
    alpha, power:
        As for :func:`minimum_detectable_effect`.
    n, k_a, k_b:
        The design to plan for; None for the observed one.

    Returns
    -------
    A :class:`PowerPlan`.

    >>> import polars as pl
    >>> v = pl.DataFrame({"run_id": ["A"] * 100, "case_id": [f"c{i}" for i in range(100)],
    ...                   "slice": ["s"] * 100, "status": ["pass"] * 70 + ["fail"] * 30})
    >>> plan = estimate_mde(v, "A")
    >>> plan.method, plan.n, round(plan.omega2, 2), round(plan.mde, 4)
    ('unpaired', 100, 0.42, 0.1816)
    """
    require_verdicts(verdicts, "estimate_mde")
    require_columns(verdicts, ["run_id", "case_id", "slice", "status"], "estimate_mde")
    if run_b is None:
        a = case_means(verdicts, run_a).filter(pl.col("k") > 0)
        p = float_or_nan(a.get_column("mean").mean()) if a.height else math.nan
        omega2 = 2.0 * p * (1.0 - p)
        n_use = a.height if n is None else n
        mde = minimum_detectable_effect(n_use, omega2, alpha=alpha, power=power) if a.height else math.nan
        return PowerPlan("unpaired", n_use, omega2, 0.0, 0.0, 1.0, 1.0, omega2, alpha, power, mde)
    joined = paired_frame(verdicts, run_a, run_b, "estimate_mde")
    shared = joined.filter(pl.col("in_a") & pl.col("in_b") & (pl.col("k_a") > 0) & (pl.col("k_b") > 0))
    kf_a, kf_b = pl.col("k_a").cast(pl.Float64), pl.col("k_b").cast(pl.Float64)
    wv_a = pl.when(kf_a >= 2).then(pl.col("mean_a") * (1.0 - pl.col("mean_a")) * kf_a / (kf_a - 1.0))
    wv_b = pl.when(kf_b >= 2).then(pl.col("mean_b") * (1.0 - pl.col("mean_b")) * kf_b / (kf_b - 1.0))
    m = shared.select(
        pl.len().cast(pl.Int64).alias("n"),
        (pl.col("mean_b") - pl.col("mean_a")).var(ddof=1).alias("var_diff"),
        wv_a.otherwise(None).mean().fill_null(0.0).alias("s2_a"),
        wv_b.otherwise(None).mean().fill_null(0.0).alias("s2_b"),
        (1.0 / (1.0 / kf_a).mean()).alias("k_a"),
        (1.0 / (1.0 / kf_b).mean()).alias("k_b"),
    ).row(0, named=True)
    n_obs = int(m["n"])
    var_diff, s2_a, s2_b = float_or_nan(m["var_diff"]), float_or_nan(m["s2_a"]), float_or_nan(m["s2_b"])
    ka_obs, kb_obs = float_or_nan(m["k_a"]), float_or_nan(m["k_b"])
    if n_obs < 2 or math.isnan(var_diff):
        nan = math.nan
        return PowerPlan("paired", n_obs, nan, s2_a, s2_b, ka_obs, kb_obs, nan, alpha, power, nan)
    omega2 = max(var_diff - s2_a / ka_obs - s2_b / kb_obs, 0.0)
    n_use = n_obs if n is None else n
    ka = ka_obs if k_a is None else k_a
    kb = kb_obs if k_b is None else k_b
    mde = minimum_detectable_effect(
        n_use, omega2, s2_a=s2_a, s2_b=s2_b, k_a=ka, k_b=kb, alpha=alpha, power=power
    )
    return PowerPlan("paired", n_use, omega2, s2_a, s2_b, ka, kb, var_diff, alpha, power, mde)
