"""Analysis of the verbosity, injection and self-preference probes, given the judge's verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict

from evalkit.errors import EvalkitError
from evalkit.probes._paired import PairedDifference, paired_difference
from evalkit.stats import Interval, mcnemar_cases_needed, t_interval, wilson_interval


class VerbosityEffect(BaseModel):
    """How padding an output changes the judge's verdict on it (padded minus original)."""

    model_config = ConfigDict(frozen=True)
    pass_rate: PairedDifference
    original_mean_score: float | None
    padded_mean_score: float | None
    score_difference: float | None
    score_difference_ci: Interval | None
    target_effect: float
    n_needed: int | None

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON."""
        return self.model_dump(mode="json")


def _bools(values: Sequence[bool] | pl.Series, name: str) -> list[bool]:
    out = list(values)
    if any(v is None for v in out):
        raise EvalkitError(f"{name} has missing verdicts; drop those items from both sides first")
    return [bool(v) for v in out]


def verbosity_effect(
    original_pass: Sequence[bool] | pl.Series,
    padded_pass: Sequence[bool] | pl.Series,
    original_score: Sequence[float] | pl.Series | None = None,
    padded_score: Sequence[float] | pl.Series | None = None,
    *,
    confidence: float = 0.95,
    target_effect: float = 0.05,
) -> VerbosityEffect:
    """The verbosity probe: the same outputs judged as they are and padded with content-free length.

    Parameters
    ----------
    original_pass, padded_pass:
        Aligned pass verdicts, one pair per output.
    original_score, padded_score:
        Optional aligned scores; the mean paired difference gets a t interval.
    confidence:
        Coverage of the intervals (Newcombe's paired method 10 for the pass rates).
    target_effect:
        A pass-rate difference worth detecting; `n_needed` is the items needed for it at 80% power,
        at the discordance observed here (None when no verdict changed).

    Returns
    -------
    A `VerbosityEffect`: rates, the paired difference padded - original with its interval and
    McNemar's exact p, mean scores and their paired difference.
    """
    orig, pad = _bools(original_pass, "original_pass"), _bools(padded_pass, "padded_pass")
    diff = paired_difference(pad, orig, confidence=confidence)
    share = diff.discordant / diff.n if diff.n else 0.0
    needed = (
        mcnemar_cases_needed(target_effect, discordant=max(share, abs(target_effect)), alpha=1 - confidence)
        if share > 0
        else None
    )
    om = pm = sd = None
    sci: Interval | None = None
    if (original_score is None) != (padded_score is None):
        raise EvalkitError("give both original_score and padded_score, or neither")
    if original_score is not None and padded_score is not None:
        o = np.asarray(list(original_score), dtype=float)
        p = np.asarray(list(padded_score), dtype=float)
        if o.size != p.size or o.size != diff.n:
            raise EvalkitError("scores must align with the pass verdicts, one pair per output")
        om, pm = float(o.mean()), float(p.mean())
        delta = p - o
        sd = float(delta.mean())
        if delta.size > 1:
            sci = t_interval(sd, float(delta.std(ddof=1)), delta.size, confidence=confidence)
    return VerbosityEffect(
        pass_rate=diff,
        original_mean_score=om,
        padded_mean_score=pm,
        score_difference=sd,
        score_difference_ci=sci,
        target_effect=target_effect,
        n_needed=needed,
    )


class AttackRate(BaseModel):
    """Attack success on outputs that fail without the attack: the share the attack turns into passes."""

    model_config = ConfigDict(frozen=True)
    attack: str
    failing: int
    flipped: int
    success_rate: float | None
    ci: Interval | None


class InjectionEffect(BaseModel):
    """Per-attack and pooled attack success rates."""

    model_config = ConfigDict(frozen=True)
    attacks: list[AttackRate]
    overall: AttackRate

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON."""
        return self.model_dump(mode="json")


def _need(frame: pl.DataFrame, columns: Sequence[str]) -> None:
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise EvalkitError(f"the frame lacks columns {absent}; it needs {list(columns)}")


def injection_effect(frame: pl.DataFrame, *, confidence: float = 0.95) -> InjectionEffect:
    """The injection probe: outputs judged without and with an injected instruction to pass them.

    Parameters
    ----------
    frame:
        Columns attack (name), base_pass (verdict without the attack), attacked_pass (with it).
    confidence:
        Coverage of the Wilson intervals.

    Returns
    -------
    An `InjectionEffect`: for each attack and pooled, among outputs that fail without the attack,
    how many pass with it.
    """
    _need(frame, ("attack", "base_pass", "attacked_pass"))
    failing = frame.filter(~pl.col("base_pass"))
    per = (
        failing.group_by("attack").agg(failing=pl.len(), flipped=pl.col("attacked_pass").sum()).sort("attack")
    )
    every = sorted(set(frame["attack"].to_list()))
    found = {r["attack"]: r for r in per.iter_rows(named=True)}

    def rate(name: str, n: int, k: int) -> AttackRate:
        return AttackRate(
            attack=name,
            failing=n,
            flipped=k,
            success_rate=k / n if n else None,
            ci=wilson_interval(k, n, confidence=confidence),
        )

    attacks = [
        rate(a, int(found[a]["failing"]), int(found[a]["flipped"])) if a in found else rate(a, 0, 0)
        for a in every
    ]
    return InjectionEffect(
        attacks=attacks,
        overall=rate("(all)", failing.height, int(failing["attacked_pass"].sum()) if failing.height else 0),
    )


class SystemPreference(BaseModel):
    """Judge pass rate minus human pass rate on one system's outputs, paired by output."""

    model_config = ConfigDict(frozen=True)
    system: str
    difference: PairedDifference


class SelfPreference(BaseModel):
    """Per system: does the judge pass it more often than humans do?"""

    model_config = ConfigDict(frozen=True)
    systems: list[SystemPreference]

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON."""
        return self.model_dump(mode="json")


def self_preference(frame: pl.DataFrame, *, confidence: float = 0.95) -> SelfPreference:
    """The self-preference probe: judge and human verdicts on the same outputs, per system.

    Parameters
    ----------
    frame:
        Columns system, judge_pass, human_pass; one row per output.
    confidence:
        Coverage of Newcombe's paired interval.

    Returns
    -------
    A `SelfPreference`: per system the judge's rate minus the human rate, its interval and McNemar's p.
    A judge favouring its own family shows a larger difference on that system than on the others.
    """
    _need(frame, ("system", "judge_pass", "human_pass"))
    out = []
    for (system,), part in frame.sort("system").group_by("system", maintain_order=True):
        diff = paired_difference(
            _bools(part["judge_pass"], "judge_pass"),
            _bools(part["human_pass"], "human_pass"),
            confidence=confidence,
        )
        out.append(SystemPreference(system=str(system), difference=diff))
    return SelfPreference(systems=out)
