"""Statistics over result frames: pass rates with intervals, clustered and paired comparisons, power, cost.

Every function is pure and works on polars frames that follow the results schema. Check rows have one row per
(run, case, repeat, check), with ``status`` in ``pass | fail | skipped | error``; :func:`case_verdicts`
collapses them to one verdict per (run, case, repeat), and each statistic says which of the two it takes
(a frame of the other grain is refused with a :class:`GrainError`). Only ``pass`` and ``fail`` are scored:
errors and unscored rows are counted and reported beside every rate, never folded into it.

Conventions (each is tested against scipy / statsmodels):

* Pass-rate intervals are Wilson score intervals.
* No interval: a function of numbers that returns an interval returns an :class:`Interval` ``(low, high)``,
  or None where none is defined (no trials, an empty table, fewer than two values for a t interval); it never
  returns NaN bounds. Frame functions keep a null cell instead, and a comparison's ``ci_low`` / ``ci_high``
  fields are NaN, as its other undefined numbers are.
* With repeats, the unit of independence is the case. The clustered standard error is the cluster-robust
  (CR1) sandwich estimate that statsmodels reports by default for an intercept-only OLS with
  ``cov_type="cluster"``: it carries the small-sample factor G/(G-1) for G cases, and with equal repeats
  per case it equals ``sd(case means, ddof=1) / sqrt(G)`` exactly.
* The flip rate of a case is the share of its pairs of scored repeats that disagree:
  ``x(K-x) / C(K, 2)`` for x passes in K repeats. It equals twice the unbiased within-case variance
  ``p(1-p) K/(K-1)``, so the mean flip rate is ``2 * sigma^2``.
* Percentiles use linear interpolation between order statistics (numpy's default ``method="linear"``).
* Paired comparisons report B minus A: a positive difference means run B passes more cases.
* A paired comparison's significance is the case-level sign-flip test on the per-case differences of pass rates
  (:func:`sign_flip_test`); with one repeat a side that is McNemar's exact test, and is reported as such. The
  minimum detectable effect is that test's: :func:`minimum_detectable_effect`.
"""

from evalkit._lazy import INTERNAL, attach
from evalkit.stats._cost import CostLatency, cost_latency
from evalkit.stats._intervals import (
    Interval,
    independent_interval,
    newcombe_paired,
    paired_means_interval,
    t_interval,
    wilson_interval,
)
from evalkit.stats._paired import PairedComparison, compare_runs, mcnemar, sign_flip_test
from evalkit.stats._power import (
    PowerPlan,
    cases_needed,
    estimate_mde,
    mcnemar_cases_needed,
    minimum_detectable_effect,
)
from evalkit.stats._rates import clustered_pass_rate, flip_rates, noise_floor, pass_rate
from evalkit.stats._splits import dev_vs_holdout
from evalkit.stats._verdicts import case_verdicts

if INTERNAL:
    from evalkit._results import CHECK_STATUSES
    from evalkit.stats._bootstrap import CHUNK_ELEMENTS, resample_chunks
    from evalkit.stats._dist import (
        binom_cdf_half,
        binom_pmf_half,
        chi2_1_sf,
        normal_ppf,
        t_ppf,
        t_sf,
        z_critical,
    )
    from evalkit.stats._frames import VERDICT_STATUSES
    from evalkit.stats._intervals import min_discordant_for_significance
    from evalkit.stats._paired import MIN_T_CASES, P_LABELS, SIGN_FLIP_EXACT_CASES, TEST_NAMES

__getattr__, __dir__, __all__ = attach(__name__, __file__)
