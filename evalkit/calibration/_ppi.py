"""A judge's pass rate corrected by a small human-labelled sample: prediction-powered inference (PPI++).

Angelopoulos, Duchi and Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference", mean estimation
with the power-tuned lambda. The point estimate and lambda follow the reference implementation (ppi-python):
lambda is tuned at the lambda = 1 estimate and clipped to [0, 1], and is exactly 0 for a judge that says the
same thing on every case. The interval is not the reference's normal one, which is far from its nominal
coverage on the few labels a calibration has (23-61% at 5-10 labels, p = 0.1; zero width whenever the judge
and the labels agree on every labelled case): the variance of the labelled term is taken from the four
(human, judge) cells each given half a pseudo-count (Jeffreys), with n - 1 in the denominators, and the
critical value is Student's t on n - 1 degrees of freedom. Below `PPI_MIN_LABELS` labels no corrected rate is
given at all: lambda is 0 and the rate is the human labels' own, with their Wilson interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from evalkit.errors import EvalkitError
from evalkit.stats import Interval, t_ppf, wilson_interval

PPI_MIN_LABELS = 10
"""Fewer human labels than this and no corrected rate is given (the human-only Wilson interval is shown).

From bench/coverage/calibration.py (2,000 simulated calibrations a setting, seed 0; p in {0.1, 0.3, 0.5},
judge TPR/TNR 0.9/0.8 and 0.95/0.95, 50 or 500 unlabelled cases), the worst coverage over the settings of the
interval below is 93.6% at 5 labels, 92.8% at 8, then 96.3% at 10, 94.5% at 15, 95.0% at 20, 93.8% at 30 and
94.5% at 50: from 10 labels on it holds in every setting. (The normal interval printed before: 17.2% at 5
labels, 54.0% at 10, 77.4% at 20, 88.1% at 50.) Below 10 the interval is also nearly [0, 1], which says no
more than the labels' own Wilson interval.
"""


class PPIEstimate(BaseModel):
    """A corrected pass rate with its interval, beside the judge-only and human-only rates."""

    model_config = ConfigDict(frozen=True)
    rate: float
    ci_low: float
    ci_high: float
    lam: float
    n_labelled: int
    n_unlabelled: int
    judge_only_rate: float
    human_only_rate: float
    human_only_ci: Interval | None
    confidence: float
    corrected: bool = True
    """False: too few labels for a corrected rate (`PPI_MIN_LABELS`); rate and interval are the human-only
    ones (lambda 0, Wilson)."""

    @property
    def why_not(self) -> str | None:
        """Why there is no corrected rate, in words, or None when there is one."""
        if self.corrected:
            return None
        return (
            f"too few labels for a corrected rate: {PPI_MIN_LABELS} needed, {self.n_labelled} given; "
            "the human-only Wilson interval is shown"
        )

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON."""
        return self.model_dump(mode="json")


def _binary(values: Sequence[float] | npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size and not np.isin(arr, (0.0, 1.0)).all():
        raise EvalkitError(f"{name} must hold only 0/1 (or false/true) verdicts")
    return arr


def _tuned_lambda(
    y: npt.NDArray[np.float64], yhat: npt.NDArray[np.float64], unl: npt.NDArray[np.float64]
) -> float:
    n, big_n = y.size, unl.size
    theta = unl.mean() + (y - yhat).mean()
    g, gh = y - theta, yhat - theta
    cov = 2.0 * ((g - g.mean()) * (gh - gh.mean())).sum() / n
    var = float(np.var(np.concatenate([gh, unl - theta]), ddof=1))
    if var == 0.0 or np.ptp(np.concatenate([yhat, unl])) == 0.0 or np.ptp(y) == 0.0:
        # a judge that says the same thing for every case carries no information to borrow (tested on the
        # verdicts themselves: the variance of a constant less its float mean need not be 0); labels that all
        # say the same thing give the judge nothing to be calibrated against
        return 0.0
    return float(np.clip(cov / (2.0 * (1.0 + n / big_n) * var), 0.0, 1.0))


def ppi_pass_rate(
    judge_all: Sequence[float] | npt.ArrayLike,
    judge_labelled: Sequence[float] | npt.ArrayLike,
    human_labelled: Sequence[float] | npt.ArrayLike,
    *,
    labelled: Sequence[int] | Sequence[bool] | npt.ArrayLike | None = None,
    confidence: float = 0.95,
    power_tuned: bool = True,
    min_labels: int = PPI_MIN_LABELS,
) -> PPIEstimate:
    """Pass rate from judge verdicts on all cases, corrected with human labels on a few of them.

    Parameters
    ----------
    judge_all:
        The judge's 0/1 verdicts on all N cases.
    judge_labelled, human_labelled:
        The judge's and a human's 0/1 verdicts on the same n labelled cases, aligned.
    labelled:
        Where the labelled cases sit in `judge_all` (integer positions or a boolean mask). Omitted,
        they are taken to be the first n. The cases left over are the unlabelled set; the judge's
        verdicts at those positions must equal `judge_labelled`.
    confidence:
        Coverage of the interval.
    power_tuned:
        Tune lambda for the smallest variance (PPI++); False uses lambda = 1 (plain PPI).
    min_labels:
        Below this many labels, no corrected rate: the human-only rate and Wilson interval (``corrected`` False).

    Returns
    -------
    A `PPIEstimate`: the corrected rate and its interval (both kept within [0, 1]; the interval never has zero
    width), lambda, the counts, the judge-only rate on all cases and the human-only rate on the labelled cases
    with its Wilson interval.
    """
    every = _binary(judge_all, "judge_all")
    yhat = _binary(judge_labelled, "judge_labelled")
    y = _binary(human_labelled, "human_labelled")
    if y.size != yhat.size:
        raise EvalkitError(
            f"judge_labelled has {yhat.size} verdicts but human_labelled has {y.size}; align them"
        )
    if y.size == 0:
        raise EvalkitError("no labelled cases: PPI needs some human labels")
    if labelled is None:
        mask = np.zeros(every.size, dtype=bool)
        mask[: y.size] = True
    else:
        where = np.asarray(labelled)
        mask = where.astype(bool) if where.dtype == bool else np.isin(np.arange(every.size), where)
        if mask.size != every.size or int(mask.sum()) != y.size:
            raise EvalkitError(
                f"labelled must locate exactly {y.size} of the {every.size} cases in judge_all"
            )
    if not np.array_equal(every[mask], yhat):
        raise EvalkitError("judge_labelled differs from judge_all at the labelled positions; pass labelled=")
    unl = every[~mask]
    if unl.size == 0:
        raise EvalkitError("every case is labelled: there is nothing for the judge to add")
    n, big_n = y.size, unl.size
    human_ci = wilson_interval(int(y.sum()), n, confidence=confidence)
    common: dict[str, Any] = {
        "n_labelled": n,
        "n_unlabelled": big_n,
        "judge_only_rate": float(every.mean()),
        "human_only_rate": float(y.mean()),
        "human_only_ci": human_ci,
        "confidence": confidence,
    }
    if n < max(min_labels, 2):
        assert human_ci is not None  # n >= 1
        return PPIEstimate(
            rate=float(y.mean()),
            ci_low=human_ci.low,
            ci_high=human_ci.high,
            lam=0.0,
            corrected=False,
            **common,
        )
    lam = _tuned_lambda(y, yhat, unl) if power_tuned else 1.0
    rate = float(lam * unl.mean() + (y - lam * yhat).mean())
    se = _standard_error(y, yhat, unl, lam)
    half = t_ppf(0.5 + confidence / 2.0, n - 1) * se
    # a pass rate lies in [0, 1]: the interval is cut there (the part cut off holds no possible value, so
    # coverage is kept); so is the point, which the correction can carry past a bound on few labels. Both ends
    # are cut to [0, 1], so the interval is never inverted.
    return PPIEstimate(
        rate=min(max(rate, 0.0), 1.0),
        ci_low=min(max(rate - half, 0.0), 1.0),
        ci_high=max(min(rate + half, 1.0), 0.0),
        lam=lam,
        **common,
    )


def _standard_error(
    y: npt.NDArray[np.float64], yhat: npt.NDArray[np.float64], unl: npt.NDArray[np.float64], lam: float
) -> float:
    """The corrected rate's standard error, each variance smoothed so that few labels cannot make it 0.

    The labelled term ``y - lam * yhat`` takes one value per (human, judge) cell; its variance is taken from
    the cells' shares with half a pseudo-count each (Jeffreys), so a cell not seen among a few labels (no
    disagreement yet) still counts for what it could be. The judge's rate on the unlabelled cases gets the
    same half pseudo-count a side. Both use n - 1 (N - 1) in the denominator.
    """
    n, big_n = y.size, unl.size
    counts = np.array(
        [np.sum((y == h) & (yhat == j)) for h in (0.0, 1.0) for j in (0.0, 1.0)], dtype=np.float64
    )
    share = (counts + 0.5) / (n + 2.0)
    values = np.array([0.0, -lam, 1.0, 1.0 - lam])
    mean = float(share @ values)
    var_labelled = float(share @ (values - mean) ** 2) * n / (n - 1)
    p_unl = (float(unl.sum()) + 0.5) / (big_n + 1.0)
    var_unl = lam**2 * p_unl * (1.0 - p_unl) * (big_n / (big_n - 1) if big_n > 1 else 1.0)
    return float(np.sqrt(var_unl / big_n + var_labelled / n))
