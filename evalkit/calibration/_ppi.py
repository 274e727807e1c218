"""A judge's pass rate corrected by a small human-labelled sample: prediction-powered inference (PPI++).

Angelopoulos, Duchi and Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference", mean estimation
with the power-tuned lambda. Conventions follow the reference implementation: lambda is tuned at the
lambda = 1 estimate and clipped to [0, 1]; standard deviations divide by n; a normal interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from evalkit.errors import EvalkitError
from evalkit.stats import Interval, wilson_interval, z_critical


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
    if var == 0.0:
        # a judge that says the same thing for every case carries no information to borrow
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

    Returns
    -------
    A `PPIEstimate`: the corrected rate and normal interval (both kept within [0, 1]), lambda, the counts, the judge-only rate
    on all cases and the human-only rate on the labelled cases with its Wilson interval.
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
    lam = _tuned_lambda(y, yhat, unl) if power_tuned else 1.0
    rate = float((lam * unl).mean() + (y - lam * yhat).mean())
    se = float(np.sqrt(np.std(lam * unl) ** 2 / big_n + np.std(y - lam * yhat) ** 2 / n))
    z = z_critical(confidence)
    # a pass rate lies in [0, 1]: the normal interval is cut there (the part cut off holds no possible value, so
    # coverage is kept); so is the point, which the correction can carry past a bound on few labels
    return PPIEstimate(
        rate=min(max(rate, 0.0), 1.0),
        ci_low=max(rate - z * se, 0.0),
        ci_high=min(rate + z * se, 1.0),
        lam=lam,
        n_labelled=n,
        n_unlabelled=big_n,
        judge_only_rate=float(every.mean()),
        human_only_rate=float(y.mean()),
        human_only_ci=wilson_interval(int(y.sum()), n, confidence=confidence),
        confidence=confidence,
    )
