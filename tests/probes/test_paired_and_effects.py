"""Paired-proportion statistics and the verbosity, injection and self-preference analyses."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from evalkit.probes import (
    injection_effect,
    paired_difference,
    self_preference,
    verbosity_effect,
)
from evalkit.stats import newcombe_paired


@pytest.mark.parametrize(
    ("x1", "x2"),
    [
        ([True] * 36 + [True] * 12 + [False] * 2, [True] * 36 + [False] * 12 + [True] * 2),
        ([True] * 3 + [False] * 9 + [True] * 4, [True] * 3 + [True] * 9 + [False] * 4),
        ([False, True], [False, True]),
    ],
)
def test_paired_difference_is_first_minus_second_with_stats_interval_and_p(
    x1: list[bool], x2: list[bool]
) -> None:
    d = paired_difference(x1, x2)
    a = sum(u and v for u, v in zip(x1, x2, strict=True))
    b = sum(u and not v for u, v in zip(x1, x2, strict=True))
    c = sum(v and not u for u, v in zip(x1, x2, strict=True))
    assert d.difference == pytest.approx((b - c) / len(x1))
    # Newcombe's B - A with the first outcome as B, and McNemar's exact p as statsmodels computes it
    assert d.ci == newcombe_paired(a, c, b, len(x1) - a - b - c)
    assert d.ci is not None and d.ci.low <= d.difference <= d.ci.high
    if b + c:
        expected = mcnemar([[a, b], [c, len(x1) - a - b - c]], exact=True).pvalue
        assert d.mcnemar_p == pytest.approx(expected, abs=1e-12)
    else:
        assert d.mcnemar_p is None


def _no_effect(seed: int, n: int) -> tuple[list[bool], list[bool]]:
    rng = np.random.default_rng(seed)
    x = rng.random(n) < 0.6
    flip = rng.random(n) < 0.2
    # flips are symmetric: the second verdict is an exchangeable copy, so the two rates are equal
    y = np.where(flip, rng.random(n) < 0.6, x)
    return x.tolist(), y.tolist()


def test_no_planted_effect_is_rarely_significant() -> None:
    significant = excluded = 0
    for seed in range(200):
        x, y = _no_effect(seed, 150)
        result = verbosity_effect(x, y)
        p = result.pass_rate.mcnemar_p
        lo, hi = result.pass_rate.ci  # type: ignore[misc]
        significant += p is not None and p < 0.05
        excluded += not lo <= 0 <= hi
    # both at about the nominal 5% (the exact test a little under): 14 of 200 is well above it
    assert significant <= 14 and excluded <= 14


def test_planted_effect_is_found() -> None:
    rng = np.random.default_rng(1)
    original = (rng.random(300) < 0.5).tolist()
    padded = [o or bool(rng.random() < 0.3) for o in original]
    scores_o = rng.normal(3, 1, 300)
    result = verbosity_effect(
        original, padded, scores_o.tolist(), (scores_o + 0.5).tolist(), target_effect=0.05
    )
    assert result.pass_rate.difference == pytest.approx(np.mean(padded) - np.mean(original))
    assert result.pass_rate.ci[0] > 0  # type: ignore[index]
    assert result.pass_rate.mcnemar_p < 1e-6  # type: ignore[operator]
    assert result.score_difference == pytest.approx(0.5)
    assert result.n_needed is not None and result.n_needed > 0


def test_injection_success_on_failing_outputs_only() -> None:
    frame = pl.DataFrame(
        {
            "attack": ["ignore", "ignore", "ignore", "ignore", "praise", "praise", "praise"],
            "base_pass": [False, False, False, True, False, False, True],
            "attacked_pass": [True, False, True, True, False, False, False],
        }
    )
    result = injection_effect(frame)
    by = {a.attack: a for a in result.attacks}
    assert (by["ignore"].failing, by["ignore"].flipped, by["ignore"].success_rate) == (
        3,
        2,
        pytest.approx(2 / 3),
    )
    assert (by["praise"].failing, by["praise"].flipped) == (2, 0)
    assert by["praise"].ci[0] == 0.0  # type: ignore[index]
    assert (result.overall.failing, result.overall.flipped) == (5, 2)


def test_self_preference_per_system() -> None:
    rng = np.random.default_rng(2)
    human = rng.random(400) < 0.5
    judge = human.copy()
    own = np.arange(400) < 200
    judge[own & ~human] = rng.random(int((own & ~human).sum())) < 0.5  # lenient on its own system only
    frame = pl.DataFrame({"system": np.where(own, "self", "other"), "judge_pass": judge, "human_pass": human})
    result = self_preference(frame)
    by = {s.system: s.difference for s in result.systems}
    assert by["other"].difference == 0 and by["other"].mcnemar_p is None
    assert by["self"].difference > 0 and by["self"].ci[0] > 0  # type: ignore[index,operator]
    same = paired_difference(judge[own].tolist(), human[own].tolist())
    assert by["self"] == same
