"""Human labels joined with a run's verdicts on (case id, check name, output hash); stale labels kept apart."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict

from evalkit.calibration._labels import Label

CASCADE_FAIL = "cheaper check"  # the start of the skipped reason the cascade gives when it did not judge


class StaleLabel(BaseModel):
    """A label of an output the run no longer has: the system's output for that case changed since."""

    model_config = ConfigDict(frozen=True)
    case_id: str
    check: str
    rater: str
    label_hash: str
    run_hashes: list[str]


class UnmatchedLabel(BaseModel):
    """A label whose case, or whose check in that case, is not in the run at all."""

    model_config = ConfigDict(frozen=True)
    case_id: str
    check: str
    rater: str
    why: str


@dataclass
class Joined:
    """One label beside the run's verdicts on the same output (the first repeat that produced it)."""

    label: Label
    slice: str
    repeat: int
    check_index: int | None
    output: Any
    judge: bool | None  # the labelled check's own verdict in the run (judge, or whatever kind it is)
    judge_kind: str
    judge_reasoning: str | None
    judge_criteria: list[dict[str, Any]] | None
    judge_source: str | None  # "run", "extra" (judged for calibration) or None (no verdict)
    judge_skipped: str | None
    code: dict[str, bool | None] = field(default_factory=dict)
    code_detail: dict[str, str] = field(default_factory=dict)

    @property
    def human(self) -> bool | None:
        return None if self.label.skipped else self.label.passed


@dataclass
class JoinResult:
    joined: list[Joined]
    stale: list[StaleLabel]
    unmatched: list[UnmatchedLabel]


def join_labels(
    rows: pl.DataFrame,
    labels: list[Label],
    criteria: dict[tuple[str, int, int], list[dict[str, Any]]] | None = None,
) -> JoinResult:
    """Match each label to the run's check rows of its case and check, by output hash.

    Parameters
    ----------
    rows:
        The run's check rows (``Run.checks()``).
    labels:
        The labels.
    criteria:
        The judge's per-criterion verdicts by (case id, repeat, check index), from the journal.

    Returns
    -------
    JoinResult
        The joined labels; the stale ones (the run has the case and check but a different output); the
        unmatched ones (no such case or check in the run). Nothing is dropped silently.
    """
    by_check: dict[tuple[str, str], list[dict[str, Any]]] = {}
    by_case: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows.sort("case_id", "repeat", "check_index").iter_rows(named=True):
        by_check.setdefault((r["case_id"], r["check_name"]), []).append(r)
        by_case.setdefault((r["case_id"], r["repeat"]), []).append(r)
    cases = {c for c, _ in by_check}
    criteria = criteria or {}
    joined: list[Joined] = []
    stale: list[StaleLabel] = []
    unmatched: list[UnmatchedLabel] = []
    for label in labels:
        found = by_check.get((label.case_id, label.check))
        if not found:
            why = (
                f"check {label.check!r} is not one of case {label.case_id}'s checks in this run"
                if label.case_id in cases
                else f"case {label.case_id} is not in this run"
            )
            unmatched.append(
                UnmatchedLabel(case_id=label.case_id, check=label.check, rater=label.rater, why=why)
            )
            continue
        same = [r for r in found if r["output_hash"] == label.output_hash]
        if not same:
            hashes = sorted({r["output_hash"] for r in found if r["output_hash"]})
            stale.append(
                StaleLabel(
                    case_id=label.case_id,
                    check=label.check,
                    rater=label.rater,
                    label_hash=label.output_hash,
                    run_hashes=hashes,
                )
            )
            continue
        verdicts = [r for r in same if r["status"] in ("pass", "fail")]
        row = verdicts[0] if verdicts else same[0]
        ran = bool(verdicts)
        code: dict[str, bool | None] = {}
        detail: dict[str, str] = {}
        for other in by_case.get((row["case_id"], row["repeat"]), []):
            if other["tier"] == "judge" or other["check_name"] == label.check:
                continue
            code[other["check_name"]] = other["passed"] if other["status"] in ("pass", "fail") else None
            detail[other["check_name"]] = other["detail"] or other["error"] or other["skipped_reason"] or ""
        joined.append(
            Joined(
                label=label,
                slice=row["slice"],
                repeat=row["repeat"],
                check_index=row["check_index"],
                output=json.loads(row["output"]) if row["output"] is not None else None,
                judge=row["passed"] if ran else None,
                judge_kind=row["tier"] or "judge",
                judge_reasoning=(row["judge_reasoning"] or row["detail"]) if ran else None,
                judge_criteria=criteria.get((row["case_id"], row["repeat"], row["check_index"]))
                if ran
                else None,
                judge_source="run" if ran else None,
                judge_skipped=None if ran else (row["skipped_reason"] or row["error"] or row["status"]),
                code=code,
                code_detail=detail,
            )
        )
    return JoinResult(joined, stale, unmatched)


def cascade_verdicts(rows: pl.DataFrame, check: str) -> pl.DataFrame:
    """The run's verdict on `check` for every case (its first repeat): the check's own verdict where it ran, and
    a fail where the cascade skipped it because a cheaper check failed (the case cannot pass then); null where
    it was not judged at all.

    Returns
    -------
    polars.DataFrame
        case_id, output_hash, verdict (bool or null).
    """
    part = rows.filter(pl.col("check_name") == check).sort("case_id", "repeat")
    part = part.unique("case_id", keep="first", maintain_order=True)
    verdict = (
        pl.when(pl.col("status").is_in(["pass", "fail"]))
        .then(pl.col("passed"))
        .when((pl.col("status") == "skipped") & pl.col("skipped_reason").str.starts_with(CASCADE_FAIL))
        .then(pl.lit(False))
        .otherwise(pl.lit(None, dtype=pl.Boolean))
    )
    return part.select("case_id", "output_hash", verdict.alias("verdict"))
