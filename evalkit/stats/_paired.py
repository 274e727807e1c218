"""Paired comparison of two runs on their shared cases: the difference, its interval, and its test.

The test is the case-level sign-flip permutation test on the per-case differences of pass rates. With one
repeat a side every difference is -1, 0 or +1 and the test is McNemar's exact test, which is what it then
reports; with repeats it sees every case whose pass rate moved, not only the cases whose majority verdict flipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Literal

import polars as pl

from evalkit.stats._dist import binom_cdf_half, binom_pmf_half, chi2_1_sf, t_sf, z_critical
from evalkit.stats._frames import count_of, float_or_nan, require_columns, require_verdicts, score
from evalkit.stats._intervals import (
    Interval,
    means_interval,
    min_discordant_for_significance,
    newcombe_paired,
    t_interval,
)

MIN_T_CASES = 10
"""Below this many cases a t interval on bounded case-mean differences is too unreliable to report."""
SIGN_FLIP_EXACT_CASES: Final = 1000
"""Up to this many non-zero differences the sign-flip test's distribution is enumerated exactly; above, its
normal limit is used (both tails of a symmetric sum of 1,000 or more bounded terms)."""
_SIGN_FLIP_EXACT_WORK: Final = 50_000_000
_MAX_DENOMINATOR: Final = 1_000_000

PairedTest = Literal["mcnemar", "sign-flip"]
TEST_NAMES: Final[dict[str, str]] = {
    "mcnemar": "McNemar's exact test",
    "sign-flip": "the sign-flip test on case pass rates",
}
"""How each paired test is named in a sentence."""
P_LABELS: Final[dict[str, str]] = {"mcnemar": "McNemar exact p", "sign-flip": "sign-flip p"}
"""How each paired test's p-value is labelled beside a number."""


@dataclass(frozen=True, eq=False)
class PairedComparison:
    """Run B against run A on their shared cases (difference = B - A).

    ``table`` is [[both_pass, only_a], [only_b, both_fail]] (rows: A pass/fail; columns: B pass/fail) on
    case-level majority verdicts (a case passes when more than half its scored repeats pass; a tie is not
    a pass). The difference and its SE (sd of per-case differences of repeat means / sqrt(n)) are on case
    means; ``t_pvalue`` is the paired t-test's two-sided p, as ``scipy.stats.ttest_rel`` computes it (1 or
    0 when every difference is equal, where scipy gives nan).

    The interval (``ci_method``) always lies in [-1, 1] and contains ``diff``:

    * ``"newcombe"``: every shared case has one scored verdict per run; Newcombe's method 10 on the table.
    * ``"t"``: with repeats, the Student-t interval on case-mean differences (as ``ttest_rel``), clipped
      to [-1, 1], when there are at least ``MIN_T_CASES`` cases and the differences vary.
    * ``"newcombe-means"``: with repeats on fewer cases, or differences that do not vary (where the t
      interval has zero width), Newcombe's construction on the case means
      (:func:`paired_means_interval`).

    ``test`` is the paired test and ``p`` its two-sided p-value: ``"mcnemar"`` (McNemar's exact test, the
    same number as ``mcnemar_exact_p``) when every shared case has one scored verdict a side, else
    ``"sign-flip"`` (:func:`sign_flip_test` on the per-case differences of pass rates, which with one verdict
    a side is McNemar's exact test). ``significant`` is ``p < alpha``: the flag the report, the per-slice table
    and ``--require-significant`` print and use. Fewer than ``min_discordant`` cases whose verdict (or pass
    rate, with repeats) changed can never be significant. The McNemar fields stay McNemar's test on the
    majority verdicts.
    """

    run_a: str
    run_b: str
    n: int
    rate_a: float
    rate_b: float
    diff: float
    se: float
    ci_low: float
    ci_high: float
    t_pvalue: float
    both_pass: int
    only_a: int
    only_b: int
    both_fail: int
    mcnemar_exact_p: float
    mcnemar_midp: float
    mcnemar_chi2: float
    mcnemar_chi2_p: float
    flipped: pl.DataFrame
    missing_in_a: list[str]
    missing_in_b: list[str]
    unscored: list[str]
    ci_method: str = "t"
    alpha: float = 0.05
    significant: bool = False
    test: PairedTest = "mcnemar"
    p: float = 1.0
    """The two-sided p-value of ``test``."""

    @property
    def min_discordant(self) -> int:
        """The fewest cases that must change (their verdict, or with repeats their pass rate) for the paired test
        to be significant at ``alpha``: m changed cases give at best p = 2 / 2^m."""
        return min_discordant_for_significance(alpha=self.alpha)

    @property
    def test_name(self) -> str:
        """The paired test in words, as the report and the gate name it."""
        return TEST_NAMES[self.test]

    @property
    def p_label(self) -> str:
        """How the p-value is labelled beside a number ("McNemar exact p", "sign-flip p")."""
        return P_LABELS[self.test]

    @property
    def table(self) -> list[list[int]]:
        return [[self.both_pass, self.only_a], [self.only_b, self.both_fail]]

    @property
    def discordant(self) -> int:
        return self.only_a + self.only_b


def mcnemar(only_a: int, only_b: int) -> tuple[float, float, float, float]:
    """McNemar's test on the discordant counts: (exact p, mid-p, chi-square, chi-square p).

    Exact: two-sided binomial test, ``min(1, 2 P(X <= min(b, c)))`` with X ~ Bin(b + c, 1/2). Mid-p
    subtracts P(X = min) once. Chi-square uses Edwards' continuity correction,
    ``max(|b - c| - 1, 0)^2 / (b + c)`` (statsmodels omits the max, which only matters when b = c).
    With no discordant pairs every p is 1.

    Parameters
    ----------
    only_a:
        Cases that pass in A and fail in B.
    only_b:
        Cases that fail in A and pass in B.

    Returns
    -------
    (exact p, mid-p, chi-square statistic, chi-square p).

    >>> exact, midp, chi2, chi2_p = mcnemar(1, 9)
    >>> round(exact, 4), round(midp, 4), chi2, round(chi2_p, 4)
    (0.0215, 0.0117, 4.9, 0.0269)
    """
    if only_a < 0 or only_b < 0:
        raise ValueError("counts must be non-negative")
    n = only_a + only_b
    if n == 0:
        return (1.0, 1.0, 0.0, 1.0)
    k = min(only_a, only_b)
    tail = binom_cdf_half(k, n)
    exact = min(1.0, 2.0 * tail)
    midp = min(1.0, 2.0 * tail - binom_pmf_half(k, n))
    chi2 = max(abs(only_a - only_b) - 1, 0) ** 2 / n
    return (exact, midp, chi2, chi2_1_sf(chi2))


def sign_flip_test(differences: Sequence[float]) -> float:
    """The sign-flip permutation test of paired differences: two-sided p for "the two runs are exchangeable".

    Under the null each case's two sides could have come from either run, so each difference is as likely
    positive as negative; p is the share of the 2^m sign assignments of the m non-zero differences whose sum
    is at least as far from 0 as the observed sum. Differences of pass rates of k repeats lie on a grid of
    1/k steps; they are put on their common grid exactly (each as a fraction of denominator at most 10^6), and
    the distribution of the sum is enumerated exactly by convolution up to ``SIGN_FLIP_EXACT_CASES`` non-zero
    differences, above which (or on a grid too fine to enumerate) its normal limit with a continuity
    correction of half the grid step is used. For differences in {-1, 0, 1} it is McNemar's exact test.

    Parameters
    ----------
    differences:
        Per-case differences, B - A (each case's pass rate in run B minus that in run A).

    Returns
    -------
    The two-sided p-value, in (0, 1]; 1 when no difference is non-zero.

    >>> sign_flip_test([1, 1, 1, 1, 1, 1, -1, 0, 0])  # McNemar's exact p for 6 against 1
    0.125
    >>> f"{sign_flip_test([-1 / 3] * 38 + [0.0, 0.0]):.2e}"
    '7.28e-12'
    """
    values: dict[float, int] = {}
    for d in differences:
        if math.isnan(d):
            raise ValueError("differences must be numbers, not NaN")
        if abs(d) > 1e-12:
            key = round(float(d), 12)
            values[key] = values.get(key, 0) + 1
    if not values:
        return 1.0
    fractions = {v: Fraction(v).limit_denominator(_MAX_DENOMINATOR) for v in values}
    grid = 1
    for f in fractions.values():
        grid = grid * f.denominator // math.gcd(grid, f.denominator)
    groups: dict[int, int] = {}  # |difference| on the common grid -> how many cases
    observed = 0
    for v, count in values.items():
        step = int(fractions[v] * grid)
        observed += step * count
        groups[abs(step)] = groups.get(abs(step), 0) + count
    m = sum(groups.values())
    total = sum(size * count for size, count in groups.items())
    if m > SIGN_FLIP_EXACT_CASES or m * total > _SIGN_FLIP_EXACT_WORK:
        spread = math.sqrt(sum(size * size * count for size, count in groups.items()))
        half_step = math.gcd(*groups)  # the sum moves in steps of twice the grid's common divisor
        return min(1.0, math.erfc(max(abs(observed) - half_step, 0) / spread / math.sqrt(2.0)))
    return _sign_flip_exact(groups, total, abs(observed))


def _sign_flip_exact(groups: dict[int, int], total: int, observed: int) -> float:
    """P(|S| >= observed) for S = sum of +/- size over the groups, every sign equally likely.

    S = 2W - total, where W is the sum of the sizes given a plus sign; W's distribution is the convolution of
    each group's size x Binomial(count, 1/2), every term positive, so far tails keep their relative precision.
    """
    import numpy as np

    dist = np.ones(1)
    for size, count in groups.items():
        weights = [math.comb(count, j) / (1 << count) for j in range(count + 1)]
        out = np.zeros(dist.size + size * count)
        for j, w in enumerate(weights):
            out[size * j : size * j + dist.size] += w * dist
        dist = out
    plus = np.arange(total + 1)
    far = np.abs(2 * plus - total) >= observed
    return min(1.0, float(dist[far].sum()))


def case_means(verdicts: pl.DataFrame, run: str) -> pl.DataFrame:
    return (
        verdicts.filter(pl.col("run_id") == run)
        .group_by("case_id")
        .agg(
            pl.col("slice").first(),
            score().count().cast(pl.Int64).alias("k"),
            score().mean().alias("mean"),
        )
    )


def paired_frame(verdicts: pl.DataFrame, run_a: str, run_b: str, where: str = "compare_runs") -> pl.DataFrame:
    """Full outer join of per-case repeat means of A and B on case_id."""
    require_verdicts(verdicts, where)
    require_columns(verdicts, ["run_id", "case_id", "slice", "status"], where)
    a = case_means(verdicts, run_a).rename({"k": "k_a", "mean": "mean_a", "slice": "slice_a"})
    b = case_means(verdicts, run_b).rename({"k": "k_b", "mean": "mean_b", "slice": "slice_b"})
    a = a.with_columns(pl.lit(True).alias("in_a"))
    b = b.with_columns(pl.lit(True).alias("in_b"))
    joined = a.join(b, on="case_id", how="full", coalesce=True)
    # sorted, so sums run in one order and a comparison gives the same floats however the groups came out
    return (
        joined.with_columns(
            pl.coalesce("slice_a", "slice_b").alias("slice"),
            pl.col("in_a").fill_null(False),
            pl.col("in_b").fill_null(False),
        )
        .drop("slice_a", "slice_b")
        .sort("case_id")
    )


def compare_runs(
    verdicts: pl.DataFrame, run_a: str, run_b: str, *, confidence: float = 0.95
) -> PairedComparison:
    """Paired comparison of two runs on shared case ids, repeats averaged per case first.

    Cases present in only one run land in ``missing_in_a`` / ``missing_in_b``; cases present in both but
    without a scored repeat in one of them land in ``unscored``. ``flipped`` lists the cases whose
    majority verdict changed, with direction "pass->fail" (A passed, B failed) or "fail->pass".

    Parameters
    ----------
    verdicts:
        Case verdicts of both runs (columns run_id, case_id, slice, status).
    run_a:
        The reference run's id.
    run_b:
        The run compared with it.
    confidence:
        Confidence level of the interval.

    Returns
    -------
    A :class:`PairedComparison` of B against A.

    >>> import polars as pl
    >>> v = pl.DataFrame({"run_id": ["A"] * 4 + ["B"] * 4, "case_id": ["a", "b", "c", "d"] * 2,
    ...                   "slice": ["s"] * 8, "status": ["pass", "pass", "fail", "fail"] * 2})
    >>> c = compare_runs(v, "A", "B")
    >>> c.n, c.diff, c.table, c.mcnemar_exact_p
    (4, 0.0, [[2, 0], [0, 2]], 1.0)
    """
    z_critical(confidence)
    joined = paired_frame(verdicts, run_a, run_b)
    missing_in_b = joined.filter(~pl.col("in_b")).get_column("case_id").sort().to_list()
    missing_in_a = joined.filter(~pl.col("in_a")).get_column("case_id").sort().to_list()
    both = joined.filter(pl.col("in_a") & pl.col("in_b"))
    ok = (pl.col("k_a") > 0) & (pl.col("k_b") > 0)
    unscored = both.filter(~ok).get_column("case_id").sort().to_list()
    shared = both.filter(ok).with_columns(
        (pl.col("mean_b") - pl.col("mean_a")).alias("d"),
        (pl.col("mean_a") > 0.5).alias("pass_a"),
        (pl.col("mean_b") > 0.5).alias("pass_b"),
    )
    summary = shared.select(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("mean_a").mean().alias("rate_a"),
        pl.col("mean_b").mean().alias("rate_b"),
        pl.col("d").mean().alias("diff"),
        pl.col("d").std(ddof=1).alias("sd"),
        count_of(pl.col("pass_a") & pl.col("pass_b")).alias("both_pass"),
        count_of(pl.col("pass_a") & ~pl.col("pass_b")).alias("only_a"),
        count_of(~pl.col("pass_a") & pl.col("pass_b")).alias("only_b"),
        count_of(~pl.col("pass_a") & ~pl.col("pass_b")).alias("both_fail"),
        ((pl.col("k_a") == 1) & (pl.col("k_b") == 1)).all().alias("single"),
        ((pl.col("mean_a") - pl.col("mean_a").mean()) * (pl.col("mean_b") - pl.col("mean_b").mean()))
        .sum()
        .alias("cross"),
    ).row(0, named=True)
    n = int(summary["n"])
    diff = float_or_nan(summary["diff"])
    sd = float_or_nan(summary["sd"])
    se, low, high, p_t = _t_interval(diff, sd, n, confidence)
    counts = [int(summary[c]) for c in ("both_pass", "only_a", "only_b", "both_fail")]
    only_a, only_b = counts[1], counts[2]
    ci: Interval | None
    if n and summary["single"]:
        method = "newcombe"
        ci = newcombe_paired(*counts, confidence=confidence)
    elif n >= MIN_T_CASES and sd > 0.0:
        method = "t"
        ci = Interval(max(low, -1.0), min(high, 1.0))
    else:
        method = "newcombe-means"
        rates = (float_or_nan(summary["rate_a"]), float_or_nan(summary["rate_b"]))
        ci = means_interval(*rates, float(summary["cross"] or 0.0), n, confidence)
    # a field of the comparison, like a frame cell: NaN where no interval is defined (no shared case)
    low, high = ci if ci is not None else (math.nan, math.nan)
    exact, midp, chi2, chi2_p = mcnemar(only_a, only_b)
    alpha = round(1.0 - confidence, 12)  # 1 - 0.95 is 0.05000000000000004 in floats
    test: PairedTest
    if method == "newcombe" or not n:
        test, p = "mcnemar", exact
    else:
        # with repeats the case is the unit and its pass rate the outcome: every case that moved counts
        test, p = "sign-flip", sign_flip_test(shared.get_column("d").to_list())
    flipped = (
        shared.filter(pl.col("pass_a") != pl.col("pass_b"))
        .select(
            "case_id",
            "slice",
            "mean_a",
            "mean_b",
            pl.when(pl.col("pass_a"))
            .then(pl.lit("pass->fail"))
            .otherwise(pl.lit("fail->pass"))
            .alias("direction"),
        )
        .sort("case_id")
    )
    return PairedComparison(
        run_a=run_a,
        run_b=run_b,
        n=n,
        rate_a=float_or_nan(summary["rate_a"]),
        rate_b=float_or_nan(summary["rate_b"]),
        diff=diff,
        se=se,
        ci_low=low,
        ci_high=high,
        t_pvalue=p_t,
        both_pass=int(summary["both_pass"]),
        only_a=only_a,
        only_b=only_b,
        both_fail=int(summary["both_fail"]),
        mcnemar_exact_p=exact,
        mcnemar_midp=midp,
        mcnemar_chi2=chi2,
        mcnemar_chi2_p=chi2_p,
        flipped=flipped,
        missing_in_a=missing_in_a,
        missing_in_b=missing_in_b,
        unscored=unscored,
        ci_method=method,
        alpha=alpha,
        significant=p < alpha,
        test=test,
        p=p,
    )


def _t_interval(diff: float, sd: float, n: int, confidence: float) -> tuple[float, float, float, float]:
    """SE, Student-t interval and two-sided p-value for a mean of n paired differences."""
    ci = t_interval(diff, sd, n, confidence=confidence)
    if ci is None:
        return (math.nan, math.nan, math.nan, math.nan)
    se = sd / math.sqrt(n)
    if se == 0.0:
        return (0.0, *ci, 1.0 if diff == 0.0 else 0.0)
    return (se, *ci, min(1.0, 2.0 * t_sf(abs(diff / se), n - 1)))
