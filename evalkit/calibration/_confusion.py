"""How a pass/fail judge or code check lines up with human pass/fail labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from evalkit.errors import EvalkitError


class ConfusionRates(BaseModel):
    """Rates of a check against human labels; a rate is None when nothing falls in its denominator."""

    model_config = ConfigDict(frozen=True)
    n: int
    human_pass: int
    human_fail: int
    true_positive_rate: float | None
    true_negative_rate: float | None
    coverage: float | None
    false_failure_rate: float | None

    def to_json(self) -> dict[str, Any]:
        """All fields as JSON."""
        return self.model_dump(mode="json")


def confusion_rates(judge: Sequence[bool], human: Sequence[bool]) -> ConfusionRates:
    """Agreement of pass (True) / fail (False) verdicts with human labels.

    Parameters
    ----------
    judge, human:
        Aligned verdicts, True for pass.

    Returns
    -------
    true positive rate (human-passed outputs the check passes), true negative rate (human-failed
    outputs it fails), and in the terms of Shankar et al. 2024 ("Who Validates the Validators?"):
    coverage, the share of human-failed outputs the check fails (so equal to the true negative rate),
    and false failure rate, the share of human-passed outputs the check fails (1 - true positive rate).
    """
    if len(judge) != len(human):
        raise EvalkitError(f"judge has {len(judge)} verdicts but human has {len(human)}; align them")
    passed = [j for j, h in zip(judge, human, strict=True) if h]
    failed = [j for j, h in zip(judge, human, strict=True) if not h]
    tpr = sum(passed) / len(passed) if passed else None
    coverage = sum(not j for j in failed) / len(failed) if failed else None
    return ConfusionRates(
        n=len(human),
        human_pass=len(passed),
        human_fail=len(failed),
        true_positive_rate=tpr,
        true_negative_rate=coverage,
        coverage=coverage,
        false_failure_rate=None if tpr is None else 1.0 - tpr,
    )
