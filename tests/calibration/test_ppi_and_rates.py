"""PPI++ against ppi-python, and judge-versus-human rates by hand."""

from __future__ import annotations

import numpy as np
import pytest

ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a test reference (pip install ppi-python)")

from evalkit.calibration import confusion_rates, ppi_pass_rate  # noqa: E402
from evalkit.errors import EvalkitError  # noqa: E402

TOL = 1e-9


def _data(seed: int, n: int, big_n: int, accuracy: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = (rng.random(n + big_n) < 0.6).astype(float)
    judge = np.where(rng.random(n + big_n) < accuracy, truth, 1 - truth)
    return judge, judge[:n], truth[:n]


@pytest.mark.parametrize(
    ("seed", "n", "big_n", "accuracy"), [(0, 50, 500, 0.9), (1, 200, 2000, 0.7), (2, 30, 100, 0.55)]
)
def test_matches_ppi_python_tuned(seed: int, n: int, big_n: int, accuracy: float) -> None:
    judge, judge_l, human_l = _data(seed, n, big_n, accuracy)
    est = ppi_pass_rate(judge, judge_l, human_l, confidence=0.9)
    y, yhat, unl = human_l, judge_l, judge[n:]
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, unl, alpha=0.1)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, unl)
    assert est.rate == pytest.approx(float(np.ravel(point)[0]), abs=TOL)
    assert est.ci_low == pytest.approx(max(float(np.ravel(lo)[0]), 0.0), abs=TOL)
    assert est.ci_high == pytest.approx(min(float(np.ravel(hi)[0]), 1.0), abs=TOL)
    assert 0.0 <= est.lam <= 1.0
    assert (est.n_labelled, est.n_unlabelled) == (n, big_n)
    assert est.judge_only_rate == pytest.approx(judge.mean())
    assert est.human_only_rate == pytest.approx(human_l.mean())


def test_untuned_is_plain_ppi_and_positions_can_be_given() -> None:
    judge, _, _ = _data(4, 0, 400, 0.8)
    rng = np.random.default_rng(9)
    where = np.sort(rng.choice(400, size=60, replace=False))
    human = (rng.random(60) < 0.5).astype(float)
    est = ppi_pass_rate(judge, judge[where], human, labelled=where, power_tuned=False)
    unl = np.delete(judge, where)
    lo, hi = ppi_py.ppi_mean_ci(human, judge[where], unl, alpha=0.05, lam=1)
    assert est.lam == 1.0
    assert est.ci_low == pytest.approx(max(float(np.ravel(lo)[0]), 0.0), abs=TOL)
    assert est.ci_high == pytest.approx(min(float(np.ravel(hi)[0]), 1.0), abs=TOL)
    with pytest.raises(EvalkitError, match="differs"):
        ppi_pass_rate(judge, 1 - judge[where], human, labelled=where)


def test_the_interval_stays_within_0_and_1() -> None:
    # nearly every case fails, by the judge and by people: the normal interval would reach below 0
    judge = np.zeros(200)
    judge[:3] = 1
    human = np.zeros(20)
    human[0] = 1
    est = ppi_pass_rate(judge, judge[:20], human)
    lo, hi = ppi_py.ppi_mean_ci(human, judge[:20], judge[20:], alpha=0.05)
    assert float(np.ravel(lo)[0]) < 0.0  # what the unbounded interval says
    assert est.ci_low == 0.0 and 0.0 <= est.rate <= est.ci_high <= 1.0
    assert est.ci_high == pytest.approx(float(np.ravel(hi)[0]), abs=TOL)


def test_confusion_rates_by_hand() -> None:
    # human: 4 pass, 3 fail. check passes 3 of the 4 passes and 1 of the 3 fails
    human = [True, True, True, True, False, False, False]
    judge = [True, True, True, False, True, False, False]
    rates = confusion_rates(judge, human)
    assert rates.true_positive_rate == pytest.approx(3 / 4)
    assert rates.true_negative_rate == pytest.approx(2 / 3)
    assert rates.coverage == pytest.approx(2 / 3)
    assert rates.false_failure_rate == pytest.approx(1 / 4)
    only_passes = confusion_rates([True, False], [True, True])
    assert only_passes.coverage is None and only_passes.false_failure_rate == pytest.approx(0.5)
