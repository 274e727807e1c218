"""What baseline.json keeps of each case so a flipped case shows its baseline side: the first repeat's output,
error and check details, clipped so the file stays small enough to review."""

from __future__ import annotations

import json
from typing import Any, Final

import polars as pl
from pydantic import BaseModel, ConfigDict

from evalkit._results import CaseStatus, CheckStatus

OUTPUT_CAP: Final = 4000
"""Characters of an output baseline.json keeps (of its text for a plain-text output, else of its JSON)."""
TEXT_CAP: Final = 1000
"""Characters of a check's detail, error and judge reasoning baseline.json keeps."""


class StoredCheck(BaseModel):
    """One check of the stored repeat, as a flipped view shows it."""

    model_config = ConfigDict(extra="ignore")

    name: str
    kind: str
    field: str | None = None
    status: CheckStatus
    detail: str = ""
    error: str | None = None
    skipped_reason: str | None = None
    judge_reasoning: str | None = None
    clipped: bool = False
    """Whether detail, error or judge reasoning was cut to ``TEXT_CAP`` characters."""


class StoredOutput(BaseModel):
    """A case's first repeat: its status, output (JSON text, as in a run's rows), error and checks."""

    model_config = ConfigDict(extra="ignore")

    repeat: int = 0
    status: CaseStatus
    output: str | None = None
    output_clipped: bool = False
    output_chars: int | None = None
    """The output's full length when it was clipped."""
    error: str | None = None
    checks: list[StoredCheck] = []


def _cut(text: str | None, cap: int) -> tuple[str | None, bool]:
    if text is None or len(text) <= cap:
        return text, False
    return text[: cap - 1] + "…", True


def clip_output(raw: str | None, cap: int = OUTPUT_CAP) -> tuple[str | None, bool, int | None]:
    """An output's JSON text cut to `cap` characters: (text, clipped, full length when clipped).

    A plain-text output is cut inside its string, so the stored value is still a JSON string.
    """
    if raw is None or len(raw) <= cap:
        return raw, False, None
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if isinstance(value, str):
        return json.dumps(value[: cap - 1] + "…", ensure_ascii=False), True, len(value)
    return raw[: cap - 1] + "…", True, len(raw)


def stored_outputs(rows: pl.DataFrame) -> dict[str, StoredOutput]:
    """Each case's first repeat from a run's check rows, clipped for baseline.json."""
    if rows.is_empty():
        return {}
    first = rows.filter(pl.col("repeat") == pl.col("repeat").min().over("case_id")).sort(
        "case_id", "check_index"
    )
    out: dict[str, StoredOutput] = {}
    for r in first.iter_rows(named=True):
        case = out.get(r["case_id"])
        if case is None:
            output, clipped, chars = clip_output(r.get("output"))
            error, _ = _cut(r.get("case_error"), TEXT_CAP)
            case = out[r["case_id"]] = StoredOutput(
                repeat=r["repeat"],
                status=r["case_status"],
                output=output,
                output_clipped=clipped,
                output_chars=chars,
                error=error,
                checks=[],
            )
        cut = {k: _cut(r.get(k), TEXT_CAP) for k in ("detail", "error", "skipped_reason", "judge_reasoning")}
        case.checks.append(
            StoredCheck(
                name=r["check_name"],
                kind=r["check_kind"],
                field=r.get("check_field"),
                status=r["status"],
                detail=cut["detail"][0] or "",
                error=cut["error"][0],
                skipped_reason=cut["skipped_reason"][0],
                judge_reasoning=cut["judge_reasoning"][0],
                clipped=any(c for _, c in cut.values()),
            )
        )
    return out


def dump_output(stored: StoredOutput) -> str:
    """One case's entry on one line, sorted keys, defaults left out: a changed case is a one-line diff."""
    return json.dumps(
        stored.model_dump(mode="json", exclude_defaults=True),
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )


OUTPUT_ROW_SCHEMA: Final[dict[str, Any]] = {
    "case_id": pl.String,
    "repeat": pl.Int64,
    "case_status": pl.String,
    "output": pl.String,
    "output_clipped": pl.Boolean,
    "output_chars": pl.Int64,
    "case_error": pl.String,
    "check_index": pl.Int64,
    "check_name": pl.String,
    "check_kind": pl.String,
    "check_field": pl.String,
    "status": pl.String,
    "detail": pl.String,
    "error": pl.String,
    "skipped_reason": pl.String,
    "judge_reasoning": pl.String,
    "clipped": pl.Boolean,
}
"""The columns of :func:`output_rows`: a run's check-row columns a flipped view reads, and the clip flags."""


def output_rows(outputs: dict[str, StoredOutput]) -> pl.DataFrame:
    """Stored outputs as check rows in a run's shape (one row per case x check), so a view reads either."""
    records = []
    for case_id, s in outputs.items():
        base = {
            "case_id": case_id,
            "repeat": s.repeat,
            "case_status": s.status,
            "output": s.output,
            "output_clipped": s.output_clipped,
            "output_chars": s.output_chars,
            "case_error": s.error,
        }
        for i, c in enumerate(s.checks):
            records.append(
                base
                | {
                    "check_index": i,
                    "check_name": c.name,
                    "check_kind": c.kind,
                    "check_field": c.field,
                    "status": c.status,
                    "detail": c.detail,
                    "error": c.error,
                    "skipped_reason": c.skipped_reason,
                    "judge_reasoning": c.judge_reasoning,
                    "clipped": c.clipped,
                }
            )
    return pl.DataFrame(records, schema=OUTPUT_ROW_SCHEMA)
