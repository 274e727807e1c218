"""What a report shows of the judge's trustworthiness: plain data that `judge_trust` builds."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

TrustState = Literal["calibrated", "uncalibrated", "stale", "not required", "unknown"]
"""The calibration states, and *unknown* when the suite could not be read to say."""


class JudgedCheck(BaseModel):
    """One judged check of a run: the judge's pass rate, and the rate corrected by human labels when there are
    some for the run's outputs."""

    model_config = ConfigDict(frozen=True)
    check: str
    state: TrustState
    """This check's state: the judge's, except *uncalibrated* when the record measured no kappa for it."""
    verdicts: int
    """Cases with a verdict on the check (first repeat; a cascade skip counts as a fail)."""
    not_judged: int
    judge_only_rate: float | None
    kappa: float | None = None
    """This check's kappa in the calibration record, if any."""
    corrected: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    method: Literal["ppi++", "human"] | None = None
    """ppi++: the judge's verdicts corrected by the labels; human: every output is labelled, so the human
    rate (with its Wilson interval) is the pass rate."""
    n_labelled: int = 0
    lam: float | None = None
    note: str | None = None
    """Why there is no corrected rate, or what the corrected rate leaves out."""


class JudgeTrust(BaseModel):
    """The judge's calibration state and each judged check's corrected pass rate, for the reports."""

    model_config = ConfigDict(frozen=True)
    state: TrustState
    reason: str
    min_kappa: float | None = None
    kappa: float | None = None
    n: int | None = None
    record: str | None = None
    labels: list[str] = []
    """The labels files read."""
    labels_dir: str | None = None
    """Where labels go by default (the suite's labels/ folder)."""
    labels_read: int = 0
    labels_joined: int = 0
    labels_stale: int = 0
    labels_unmatched: int = 0
    problems: list[str] = []
    """Labels files that could not be read, and why."""
    confidence: float = 0.95
    checks: list[JudgedCheck] = []

    @property
    def badge(self) -> str:
        return f"judge {self.state}"

    @property
    def quiet(self) -> bool:
        """Nothing worth saying: no bar to meet, no corrected rate to show, no labels file that failed to read."""
        return self.state == "not required" and not self.problems and not any(c.method for c in self.checks)

    def to_json(self) -> dict[str, object]:
        """All fields as JSON."""
        return self.model_dump(mode="json")
