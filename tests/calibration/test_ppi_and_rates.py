"""PPI++ against ppi-python (point and lambda), its small-sample interval by hand, and judge-versus-human rates."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import t as student_t

ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is a test reference (pip install ppi-python)")

from evalkit.calibration import PPI_MIN_LABELS, confusion_rates, ppi_pass_rate  # noqa: E402
from evalkit.errors import EvalkitError  # noqa: E402

TOL = 1e-9


def _interval(
    y: np.ndarray, yhat: np.ndarray, unl: np.ndarray, lam: float, confidence: float
) -> tuple[float, float]:
    """The small-sample interval written out: Jeffreys-smoothed cell variances, Student's t on n - 1."""
    n, big_n = y.size, unl.size
    cells = {(h, j): 0.5 for h in (0, 1) for j in (0, 1)}
    for h, j in zip(y, yhat, strict=True):
        cells[(int(h), int(j))] += 1
    value = {(h, j): h - lam * j for h, j in cells}
    mean = sum(cells[c] * value[c] for c in cells) / (n + 2)
    var_l = sum(cells[c] * (value[c] - mean) ** 2 for c in cells) / (n + 2) * n / (n - 1)
    q = (unl.sum() + 0.5) / (big_n + 1)
    var_u = lam**2 * q * (1 - q) * big_n / (big_n - 1)
    rate = lam * unl.mean() + (y - lam * yhat).mean()
    half = student_t.ppf(0.5 + confidence / 2, n - 1) * np.sqrt(var_u / big_n + var_l / n)
    return min(max(rate - half, 0.0), 1.0), max(min(rate + half, 1.0), 0.0)


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
    point = ppi_py.ppi_mean_pointestimate(y, yhat, unl)
    assert est.rate == pytest.approx(float(np.ravel(point)[0]), abs=TOL)
    assert (est.ci_low, est.ci_high) == pytest.approx(_interval(y, yhat, unl, est.lam, 0.9), abs=TOL)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, unl, alpha=0.1)
    # the small-sample interval is wider than the reference's normal one, by at most a third at these sizes
    ref = float(np.ravel(hi)[0] - np.ravel(lo)[0])
    assert ref <= est.ci_high - est.ci_low <= 1.33 * ref
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
    point = ppi_py.ppi_mean_pointestimate(human, judge[where], unl, lam=1)
    assert est.lam == 1.0
    assert est.rate == pytest.approx(float(np.ravel(point)[0]), abs=TOL)
    assert (est.ci_low, est.ci_high) == pytest.approx(_interval(human, judge[where], unl, 1.0, 0.95), abs=TOL)
    with pytest.raises(EvalkitError, match="differs"):
        ppi_pass_rate(judge, 1 - judge[where], human, labelled=where)


def test_the_interval_stays_within_0_and_1() -> None:
    # nearly every case fails, by the judge and by people: the normal interval would reach below 0
    judge = np.zeros(200)
    judge[:3] = 1
    human = np.zeros(20)
    human[0] = 1
    est = ppi_pass_rate(judge, judge[:20], human)
    lo, _hi = ppi_py.ppi_mean_ci(human, judge[:20], judge[20:], alpha=0.05)
    assert float(np.ravel(lo)[0]) < 0.0  # what the unbounded interval says
    assert est.ci_low == 0.0 and 0.0 <= est.rate <= est.ci_high <= 1.0


def test_no_zero_width_interval_where_the_judge_and_labels_agree_on_every_label() -> None:
    # issue 23: 8 labels all agreeing with the judge, all fails, printed "0.0% 95% CI 0.0%-0.0%" before
    rng = np.random.default_rng(3)
    judge = (rng.random(51) < 0.3).astype(float)
    judge[:12] = 0
    est = ppi_pass_rate(judge, judge[:12], judge[:12])
    assert est.corrected and est.ci_high - est.ci_low > 0.05
    low = ppi_pass_rate(judge, judge[:8], judge[:8])
    assert not low.corrected and low.ci_high > 0.2  # too few labels: the Wilson interval of 0 of 8


def test_too_few_labels_gives_the_human_only_wilson_interval() -> None:
    judge = np.array([1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0] * 5, dtype=float)
    human = judge[: PPI_MIN_LABELS - 1].copy()
    human[0] = 0
    est = ppi_pass_rate(judge, judge[: human.size], human)
    assert not est.corrected and est.lam == 0.0
    assert est.why_not is not None and f"{PPI_MIN_LABELS} needed" in est.why_not
    assert est.human_only_ci is not None
    assert (est.rate, est.ci_low, est.ci_high) == (est.human_only_rate, *est.human_only_ci)
    enough = ppi_pass_rate(judge, judge[:PPI_MIN_LABELS], judge[:PPI_MIN_LABELS])
    assert enough.corrected and enough.why_not is None


def test_lambda_is_exactly_0_for_a_constant_judge_and_for_constant_labels() -> None:
    # issue 23: "lambda 0.475" for a judge that fails every case
    # (the variance of a constant less its float mean was not exactly 0: these gave 0.158 and 0.450)
    judge = np.zeros(51)
    human = np.array([0, 1, 0, 0, 0, 1, 1, 0, 0, 0], dtype=float)
    est = ppi_pass_rate(judge, judge[:10], human)
    assert est.lam == 0.0 and est.rate == pytest.approx(human.mean())
    ones = np.ones(51)
    human = np.array([1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1], dtype=float)
    assert ppi_pass_rate(ones, ones[:13], human).lam == 0.0
    ones = np.ones(40)
    assert ppi_pass_rate(ones * 0.0 + 1.0, ones[:12], ones[:12]).lam == 0.0
    mixed = (np.arange(40) % 3 == 0).astype(float)
    const_human = ppi_pass_rate(mixed, mixed[:12], np.ones(12))
    assert const_human.lam == 0.0 and const_human.ci_high - const_human.ci_low > 0.0


def test_labels_that_all_fail_give_no_inverted_interval() -> None:
    # issue 23: an inverted interval was possible (here low 0.0 > high -4e-33: lambda from float dust)
    bits = "11111110001100010001000010000010000010010001101111000010100100"
    judge = np.array([float(b) for b in bits])
    est = ppi_pass_rate(judge, judge[:13], np.zeros(13))
    assert est.lam == 0.0 and est.ci_low == 0.0 < est.ci_high


def test_the_interval_is_never_inverted_or_empty() -> None:
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(PPI_MIN_LABELS, 20))
        judge = (rng.random(n + 30) < rng.random()).astype(float)
        human = (rng.random(n) < rng.random()).astype(float)
        est = ppi_pass_rate(judge, judge[:n], human)
        assert 0.0 <= est.ci_low <= est.rate <= est.ci_high <= 1.0
        assert est.ci_high > est.ci_low


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
