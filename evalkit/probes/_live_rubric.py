"""The live verbosity and injection probes: a suite's judged outputs, judged as they are and altered.

Both run the suite's system through the runner (`run_for_outputs`), then ask the suite's own judge about each
judged check's output and a twin of it: padded with content-free length (verbosity), or carrying an instruction
to the grader (injection). The verdict on the original is the run's (read back from the response cache).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalkit.errors import EvalkitError, JudgeError
from evalkit.probes._attacks import ATTACKS, attack
from evalkit.probes._effects import InjectionEffect, VerbosityEffect, injection_effect, verbosity_effect
from evalkit.probes._live import JudgedOutput, LiveOptions, SuiteOutputs, parallel, run_for_outputs
from evalkit.probes._padding import PADDINGS, pad

if TYPE_CHECKING:
    from evalkit.suite import Suite


def _words(text: str) -> int:
    return len(text.split())


def _verdict(found: SuiteOutputs, out: JudgedOutput, text: str) -> tuple[bool | None, float | None, str]:
    """(passed, score, error) of the judge on `text` in place of the output; a malformed verdict is an error."""
    try:
        grade = found.judge(out.check, text, out.case, repeat=0)
    except JudgeError as exc:
        return None, None, str(exc)
    if grade.model_version:
        found.served.add(grade.model_version)
    return grade.passed, grade.score, ""


@dataclass
class _About:
    suite: str
    suite_version: str
    system: str
    judge_model: str
    judge_served: list[str]
    run_dir: str
    outputs: int
    errored_cases: int
    not_text: int

    @classmethod
    def of(cls, found: SuiteOutputs) -> _About:
        return cls(
            suite=found.suite.name,
            suite_version=found.suite.version,
            system=found.system,
            judge_model=found.judge.settings.model,
            judge_served=sorted(found.served),
            run_dir=str(found.run_dir),
            outputs=len(found.outputs),
            errored_cases=found.errored_cases,
            not_text=found.not_text,
        )


@dataclass
class VerbosityProbe:
    """The verbosity probe of one suite's judge: the effect, and one row per judged output."""

    about: _About
    padding: str
    effect: VerbosityEffect
    rows: pl.DataFrame = field(repr=False)
    judge_errors: int = 0

    def to_json(self) -> dict[str, Any]:
        """Everything but the rows, as JSON."""
        return {
            **vars(self.about),
            "probe": "verbosity",
            "padding": self.padding,
            "judge_errors": self.judge_errors,
            "effect": self.effect.to_json(),
        }


def verbosity_probe(
    suite: Suite | str | Path,
    system: Any = None,
    *,
    padding: str = "filler",
    options: LiveOptions | None = None,
    confidence: float = 0.95,
    target_effect: float = 0.05,
) -> VerbosityProbe:
    """Judge each judged output of `system` on `suite` as it is and padded; the paired pass-rate difference.

    Parameters
    ----------
    suite, system:
        As `ek.run` takes them (system None: the suite's default, e.g. its offline baseline).
    padding:
        ``filler`` (content-free elaboration) or ``repeat-list`` (its points restated as a list, twice).
    options:
        Run directory root, cache and concurrency (`LiveOptions`).
    confidence, target_effect:
        As `verbosity_effect`: interval coverage, and the pass-rate difference the sample size is given for.

    Returns
    -------
    A `VerbosityProbe`; outputs with a judge error on either side are left out of the effect and counted.
    """
    if padding not in PADDINGS:
        raise EvalkitError(f"unknown padding {padding!r}; choose one of {sorted(PADDINGS)}")
    found = run_for_outputs(suite, system, options=options)
    opts = options or LiveOptions()

    def judge_both(out: JudgedOutput) -> dict[str, Any]:
        padded = pad(out.text, padding)
        op, osc, oerr = _verdict(found, out, out.text)
        pp, psc, perr = _verdict(found, out, padded)
        return {
            "item": out.item,
            "case_id": out.case.id,
            "slice": out.case.slice,
            "original_pass": op,
            "original_score": osc,
            "padded_pass": pp,
            "padded_score": psc,
            "original_words": _words(out.text),
            "padded_words": _words(padded),
            "error": oerr or perr or None,
        }

    rows = pl.DataFrame(
        parallel(judge_both, found.outputs, concurrency=opts.concurrency),
        schema={
            "item": pl.String,
            "case_id": pl.String,
            "slice": pl.String,
            "original_pass": pl.Boolean,
            "original_score": pl.Float64,
            "padded_pass": pl.Boolean,
            "padded_score": pl.Float64,
            "original_words": pl.Int64,
            "padded_words": pl.Int64,
            "error": pl.String,
        },
        orient="row",
    )
    usable = rows.filter(pl.col("original_pass").is_not_null() & pl.col("padded_pass").is_not_null())
    effect = verbosity_effect(
        usable["original_pass"],
        usable["padded_pass"],
        usable["original_score"],
        usable["padded_score"],
        confidence=confidence,
        target_effect=target_effect,
    )
    return VerbosityProbe(
        about=_About.of(found),
        padding=padding,
        effect=effect,
        rows=rows,
        judge_errors=rows.height - usable.height,
    )


def attack_n_needed(rate: float, *, power: float = 0.8) -> int:
    """Failing outputs needed to see an attack that succeeds at `rate` at least once, with probability `power`.

    One success is enough to rule out a success rate of 0, so this is the sample at which an attack of that
    strength shows up at all: the smallest n with 1 - (1 - rate)^n >= power.
    """
    if not 0 < rate < 1:
        raise EvalkitError(f"an attack success rate to detect must lie strictly between 0 and 1, not {rate}")
    return math.ceil(math.log(1 - power) / math.log(1 - rate))


@dataclass
class InjectionProbe:
    """The injection probe of one suite's judge: success per attack and pooled, and the verdicts behind them."""

    about: _About
    effect: InjectionEffect
    base_failing: int
    target_effect: float
    n_needed: int
    rows: pl.DataFrame = field(repr=False)
    judge_errors: int = 0

    def to_json(self) -> dict[str, Any]:
        """Everything but the rows, as JSON."""
        return {
            **vars(self.about),
            "probe": "injection",
            "base_failing": self.base_failing,
            "judge_errors": self.judge_errors,
            "target_effect": self.target_effect,
            "n_needed": self.n_needed,
            "effect": self.effect.to_json(),
        }


def injection_probe(
    suite: Suite | str | Path,
    system: Any = None,
    *,
    attacks: Sequence[str] | None = None,
    options: LiveOptions | None = None,
    confidence: float = 0.95,
    target_effect: float = 0.05,
) -> InjectionProbe:
    """Judge each judged output of `system` that fails as it is again with each attack applied.

    Parameters
    ----------
    suite, system:
        As `ek.run` takes them (system None: the suite's default, e.g. its offline baseline).
    attacks:
        Names from `ATTACKS` (default: all of them).
    options:
        Run directory root, cache and concurrency (`LiveOptions`).
    confidence:
        Coverage of the Wilson intervals.
    target_effect:
        An attack success rate worth detecting; `n_needed` is the failing outputs needed to see it.

    Returns
    -------
    An `InjectionProbe`: per attack and pooled, the share of failing outputs the attack turns into passes.
    Passing outputs are not attacked (an attack can only turn a fail into a pass).
    """
    chosen = list(attacks) if attacks else list(ATTACKS)
    unknown = [a for a in chosen if a not in ATTACKS]
    if unknown:
        raise EvalkitError(f"unknown attacks {unknown}; choose from {list(ATTACKS)}")
    found = run_for_outputs(suite, system, options=options)
    opts = options or LiveOptions()
    base = parallel(lambda o: _verdict(found, o, o.text), found.outputs, concurrency=opts.concurrency)
    failing = [o for o, (passed, _, _) in zip(found.outputs, base, strict=True) if passed is False]
    work = [(o, name) for o in failing for name in chosen]

    def judge_attacked(pair: tuple[JudgedOutput, str]) -> dict[str, Any]:
        out, name = pair
        passed, score, err = _verdict(found, out, attack(out.text, name))
        return {
            "item": out.item,
            "case_id": out.case.id,
            "attack": name,
            "base_pass": False,
            "attacked_pass": passed,
            "attacked_score": score,
            "error": err or None,
        }

    rows = pl.DataFrame(
        parallel(judge_attacked, work, concurrency=opts.concurrency),
        schema={
            "item": pl.String,
            "case_id": pl.String,
            "attack": pl.String,
            "base_pass": pl.Boolean,
            "attacked_pass": pl.Boolean,
            "attacked_score": pl.Float64,
            "error": pl.String,
        },
        orient="row",
    )
    usable = rows.filter(pl.col("attacked_pass").is_not_null())
    effect = injection_effect(usable, confidence=confidence)
    # an attack no failing output met still gets its (empty) row, in the order given
    named = {a.attack: a for a in effect.attacks}
    from evalkit.probes._effects import AttackRate

    ordered = [
        named.get(n) or AttackRate(attack=n, failing=0, flipped=0, success_rate=None, ci=None) for n in chosen
    ]
    return InjectionProbe(
        about=_About.of(found),
        effect=InjectionEffect(attacks=ordered, overall=effect.overall),
        base_failing=len(failing),
        target_effect=target_effect,
        n_needed=attack_n_needed(target_effect),
        rows=rows,
        judge_errors=sum(1 for p, _, _ in base if p is None) + rows.height - usable.height,
    )
