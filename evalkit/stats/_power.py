"""Power: the minimum detectable effect of a design, the cases a target effect needs, and both from runs."""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from evalkit.errors import EvalkitError
from evalkit.stats._dist import normal_ppf
from evalkit.stats._frames import float_or_nan, require_columns, require_verdicts
from evalkit.stats._paired import case_means, paired_frame


def _z_pair(alpha: float, power: float) -> tuple[float, float]:
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("alpha and power must be in (0, 1)")
    return normal_ppf(1.0 - alpha / 2.0), normal_ppf(power)


def _pair_variance(omega2: float, s2_a: float, s2_b: float, k_a: float, k_b: float) -> float:
    if min(omega2, s2_a, s2_b) < 0 or k_a < 1 or k_b < 1:
        raise ValueError("variances must be >= 0 and repeats >= 1")
    return omega2 + s2_a / k_a + s2_b / k_b


def _grid(k_a: float, k_b: float) -> int:
    """The common denominator of a difference of pass rates over k_a and k_b repeats (1 with one repeat)."""
    a, b = max(1, round(k_a)), max(1, round(k_b))
    return a * b // math.gcd(a, b)


def _mde(n: float, var: float, z_a: float, z_b: float, grid: int) -> float:
    """The smallest mean difference the sign-flip test detects on n differences of variance var.

    The test's critical sum is z_a times the root of the sum of squared differences, n (var + delta^2) in
    expectation; the sum itself has sd sqrt(n var). Power is reached where
    ``delta sqrt(n) = z_a sqrt(var + delta^2) + z_b sqrt(var)``, solved in closed form, plus the exact test's
    continuity correction, half the step of its sum (1/n with one repeat: Fleiss' correction for McNemar).
    """
    if n <= z_a * z_a:
        return math.inf
    root = math.sqrt(n) * z_b + z_a * math.sqrt(n + z_b * z_b - z_a * z_a)
    return math.sqrt(var) * root / (n - z_a * z_a) + 1.0 / (grid * n)


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
    """Smallest true difference evalkit's paired test at ``alpha`` detects with ``power`` on n cases.

    The paired test is the sign-flip test on per-case differences of pass rates (McNemar's exact test with one
    repeat). With v = omega2 + s2_a/k_a + s2_b/k_b the variance across cases of a case's difference (omega2:
    of the true paired difference; s2_a, s2_b: the mean within-case variances of runs with k_a, k_b repeats),
    delta solves ``delta sqrt(n) = z_{1-alpha/2} sqrt(v + delta^2) + z_{power} sqrt(v)`` (Connor's equation
    for McNemar's test, with v + delta^2 the discordant share), plus the continuity correction
    ``1 / (n lcm(k_a, k_b))``, half the step of the test's sum (Fleiss' correction with one repeat).

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
    The minimum detectable effect, as a difference of proportions; inf when no difference of at most 1 (100
    points) is detectable: for n <= z_{1-alpha/2}^2 (under 4), and for a few cases of wide spread.

    >>> round(minimum_detectable_effect(200, 0.05), 4)
    0.0499
    """
    z_a, z_b = _z_pair(alpha, power)
    if n <= 0:
        return math.inf
    mde = _mde(n, _pair_variance(omega2, s2_a, s2_b, k_a, k_b), z_a, z_b, _grid(k_a, k_b))
    # a difference of pass rates is at most 1: an effect beyond it is no effect the test can detect
    return mde if mde <= 1.0 else math.inf


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
    """Cases needed for :func:`minimum_detectable_effect` to reach ``effect``.

    Parameters
    ----------
    effect:
        The true difference to detect, > 0.
    omega2, s2_a, s2_b, k_a, k_b, alpha, power:
        As for :func:`minimum_detectable_effect`.

    Returns
    -------
    The smallest number of cases whose MDE is at most ``effect``.

    >>> cases_needed(0.05, 0.05)
    200
    """
    if effect <= 0:
        raise ValueError(f"effect must be positive, got {effect}")
    z_a, z_b = _z_pair(alpha, power)
    v = _pair_variance(omega2, s2_a, s2_b, k_a, k_b)
    grid = _grid(k_a, k_b)

    def enough(m: int) -> bool:
        return _mde(m, v, z_a, z_b, grid) <= effect

    # Connor's n without the continuity correction is a lower bound; double up to a bound, then bisect
    low = max(1, math.floor((z_a * math.sqrt(v + effect**2) + z_b * math.sqrt(v)) ** 2 / effect**2))
    high = max(low, 4)
    while not enough(high):
        low, high = high, 2 * high
    while low < high:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid + 1
    return high


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

    ``method`` is "paired" (omega2 from per-case differences of run means) or "unpaired" (no baseline: two
    runs like this one, the variance of a case's pass rate taken for each side at its own rate). ``test`` is
    the paired test the MDE is the power of: "mcnemar" with one repeat a side, else "sign-flip".
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
    test: str = "mcnemar"


def _test_of(k_a: float, k_b: float) -> str:
    return "mcnemar" if _grid(k_a, k_b) == 1 else "sign-flip"


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
    (K the harmonic mean of observed repeats), so planning with other k does not count it twice. The MDE is
    :func:`minimum_detectable_effect` of these terms (at the observed design, of ``var_diff``); 0 when
    ``var_diff`` is 0, since a comparison in which no case moved says nothing about the next one.

    Unpaired (no baseline): the MDE between two runs like ``run_a`` (its cases, repeats and spread), for a
    change that may move each case differently. A case's pass rate over k repeats varies across cases by
    ``b q(1-q) + w q(1-q) / k`` at a rate q, where ``w = s2 / (p(1-p))`` is the share of the variance within
    cases (s2: the mean within-case variance, measured with repeats; 0 with one repeat) and ``b = 1 - w``. For a
    change delta, ``var_diff = v(p) + v(p')`` with p' = p moved delta towards 1/2 (the harder direction), and the
    MDE is the delta that :func:`minimum_detectable_effect` returns for it (found by fixed-point iteration). With
    one repeat v(q) = q(1-q): the two-proportion variance. Defaults: n, k_a, k_b as observed (for the unpaired
    plan, k_b defaults to k_a).

    Parameters
    ----------
    verdicts:
        Case verdicts (columns run_id, case_id, slice, status).
    run_a:
        The reference run (the only run, unpaired).
    run_b:
        The run compared with it; None for the unpaired plan.
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
    >>> plan.method, plan.n, round(plan.var_diff, 2), round(plan.mde, 4)
    ('unpaired', 100, 0.46, 0.2054)
    """
    require_verdicts(verdicts, "estimate_mde")
    require_columns(verdicts, ["run_id", "case_id", "slice", "status"], "estimate_mde")
    if run_b is None:
        return _unpaired(verdicts, run_a, alpha=alpha, power=power, n=n, k_a=k_a, k_b=k_b)
    joined = paired_frame(verdicts, run_a, run_b, "estimate_mde")
    shared = joined.filter(pl.col("in_a") & pl.col("in_b") & (pl.col("k_a") > 0) & (pl.col("k_b") > 0))
    kf_a, kf_b = pl.col("k_a").cast(pl.Float64), pl.col("k_b").cast(pl.Float64)
    m = shared.select(
        pl.len().cast(pl.Int64).alias("n"),
        (pl.col("mean_b") - pl.col("mean_a")).var(ddof=1).alias("var_diff"),
        _within(pl.col("mean_a"), kf_a).alias("s2_a"),
        _within(pl.col("mean_b"), kf_b).alias("s2_b"),
        (1.0 / (1.0 / kf_a).mean()).alias("k_a"),
        (1.0 / (1.0 / kf_b).mean()).alias("k_b"),
    ).row(0, named=True)
    n_obs = int(m["n"])
    var_diff, s2_a, s2_b = float_or_nan(m["var_diff"]), float_or_nan(m["s2_a"]), float_or_nan(m["s2_b"])
    ka_obs, kb_obs = float_or_nan(m["k_a"]), float_or_nan(m["k_b"])
    ka = ka_obs if k_a is None else k_a
    kb = kb_obs if k_b is None else k_b
    test = _test_of(ka, kb) if n_obs else "mcnemar"
    if n_obs < 2 or math.isnan(var_diff):
        nan = math.nan
        return PowerPlan("paired", n_obs, nan, s2_a, s2_b, ka_obs, kb_obs, nan, alpha, power, nan, test)
    omega2 = max(var_diff - s2_a / ka_obs - s2_b / kb_obs, 0.0)
    n_use = n_obs if n is None else n
    mde = 0.0
    if var_diff > 0.0:
        mde = minimum_detectable_effect(
            n_use, omega2, s2_a=s2_a, s2_b=s2_b, k_a=ka, k_b=kb, alpha=alpha, power=power
        )
    return PowerPlan("paired", n_use, omega2, s2_a, s2_b, ka, kb, var_diff, alpha, power, mde, test)


def _within(mean: pl.Expr, k: pl.Expr) -> pl.Expr:
    """The mean over cases with two or more scored repeats of the unbiased within-case variance (0 if none)."""
    return pl.when(k >= 2).then(mean * (1.0 - mean) * k / (k - 1.0)).otherwise(None).mean().fill_null(0.0)


def _unpaired(
    verdicts: pl.DataFrame,
    run_a: str,
    *,
    alpha: float,
    power: float,
    n: int | None,
    k_a: float | None,
    k_b: float | None,
) -> PowerPlan:
    """The plan for two runs like ``run_a``; see :func:`estimate_mde`."""
    a = case_means(verdicts, run_a).filter(pl.col("k") > 0)
    kf = pl.col("k").cast(pl.Float64)
    m = a.select(
        pl.col("mean").mean().alias("p"),
        _within(pl.col("mean"), kf).alias("s2"),
        (1.0 / (1.0 / kf).mean()).alias("k"),
    ).row(0, named=True)
    n_use = a.height if n is None else n
    if not a.height:
        nan = math.nan
        return PowerPlan("unpaired", n_use, nan, 0.0, 0.0, 1.0, 1.0, nan, alpha, power, nan)
    p, s2 = float(m["p"]), float(m["s2"])
    ka = float(m["k"]) if k_a is None else k_a
    kb = ka if k_b is None else k_b
    pq = p * (1.0 - p)
    within = min(max(s2 / pq, 0.0), 1.0) if pq > 0.0 else 0.0

    def terms(delta: float) -> tuple[float, float, float]:
        """omega2 (between cases, both sides), s2 of A, s2 of B, for a change of delta towards 1/2."""
        q = min(max(p + delta if p < 0.5 else p - delta, 0.0), 1.0)
        qq = q * (1.0 - q)
        return (1.0 - within) * (pq + qq), within * pq, within * qq

    def mde_at(delta: float) -> float:
        omega2, s2_a, s2_b = terms(delta)
        return minimum_detectable_effect(
            n_use, omega2, s2_a=s2_a, s2_b=s2_b, k_a=ka, k_b=kb, alpha=alpha, power=power
        )

    # the MDE grows as the change it assumes moves the rate towards 1/2: the smallest fixed point, from below
    room = max(p, 1.0 - p)
    delta = mde_at(0.0)
    for _ in range(200):
        if not delta <= room:
            delta = math.inf
            break
        nxt = mde_at(delta)
        if abs(nxt - delta) < 1e-12:
            delta = nxt
            break
        delta = nxt
    omega2, s2_a, s2_b = terms(delta if math.isfinite(delta) else room)
    var = _pair_variance(omega2, s2_a, s2_b, ka, kb)
    return PowerPlan(
        "unpaired", n_use, omega2, s2_a, s2_b, ka, kb, var, alpha, power, delta, _test_of(ka, kb)
    )
