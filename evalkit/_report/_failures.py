"""Which cases failed and why, case by case: the list the terminal prints and the HTML table shows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from evalkit._results import NOT_RUN_STATUSES, criteria_of
from evalkit.stats import case_verdicts

ShowFailures = int | Literal["all"]
DEFAULT_SHOW_FAILURES = 10


@dataclass(frozen=True)
class CheckLine:
    """One check of a failing case: its verdict, detail, and what the judge said when a judge gave it."""

    name: str
    kind: str
    status: str
    detail: str
    reasoning: str | None = None
    criteria: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Failure:
    """A case whose verdict is fail or error, as its first non-passing repeat shows it."""

    case_id: str
    slice: str
    status: str
    repeat: int
    output: str | None
    error: str | None
    checks: list[CheckLine]

    @property
    def first_problem(self) -> str:
        if self.error:
            return f"error: {self.error}"
        for c in self.checks:
            if c.status != "pass" and c.status not in NOT_RUN_STATUSES:
                return f"{c.status}: {c.name}: {c.detail}"
        return self.status


def _failing(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per failing or errored case (its first such repeat), errors first then by case id."""
    verdicts = case_verdicts(rows).filter(pl.col("status").is_in(["fail", "error"]))
    return (
        verdicts.sort("case_id", "repeat")
        .group_by("case_id", maintain_order=True)
        .agg(pl.col("repeat").first(), pl.col("status").first())
        .sort(pl.col("status") != "error", "case_id")
    )


def count_failures(rows: pl.DataFrame) -> int:
    """How many cases failed or errored."""
    return _failing(rows).height


def failures(
    rows: pl.DataFrame,
    criteria: dict[tuple[str, int, int], list[dict[str, Any]]] | None = None,
    *,
    limit: int | None = None,
) -> list[Failure]:
    """The cases with a failing or errored verdict (the first ``limit``), errors first then by case id; one
    repeat each."""
    first = _failing(rows)
    if limit is not None:
        first = first.head(limit)
    if first.is_empty():
        return []
    part = rows.join(first.select("case_id", "repeat"), on=["case_id", "repeat"], how="inner").sort(
        "case_id", "check_index"
    )
    criteria = criteria or criteria_of(part)
    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in part.iter_rows(named=True):
        by_case.setdefault(r["case_id"], []).append(r)
    out = []
    for cid, repeat, status in first.iter_rows():
        checks = by_case.get(cid, [])
        head = checks[0] if checks else {}
        lines = [
            CheckLine(
                name=str(c["check_name"]) + (f" [{c['check_field']}]" if c.get("check_field") else ""),
                kind=str(c["check_kind"]),
                status=str(c["status"]),
                detail=str(c.get("error") or c.get("detail") or c.get("skipped_reason") or ""),
                reasoning=c.get("judge_reasoning"),
                criteria=criteria.get((cid, repeat, c["check_index"]), []),
            )
            for c in checks
            if c.get("check_index") is not None
        ]
        out.append(
            Failure(
                case_id=cid,
                slice=str(head.get("slice") or ""),
                status=status,
                repeat=repeat,
                output=head.get("output"),
                error=head.get("case_error"),
                checks=lines,
            )
        )
    return out


def flaky_cases(verdicts: pl.DataFrame) -> list[str]:
    """Case ids whose scored verdict differs across repeats (some pass, some fail)."""
    scored = verdicts.filter(pl.col("status").is_in(["pass", "fail"]))
    flaky = scored.group_by("case_id").agg(pl.col("status").n_unique().alias("k")).filter(pl.col("k") > 1)
    return sorted(flaky.get_column("case_id").to_list())


def failure_lines(
    found: list[Failure], total: int, show: ShowFailures = DEFAULT_SHOW_FAILURES, width: int = 160
) -> list[str]:
    """The failing cases as terminal lines: the first ``show`` (or all) of ``total``, each with its first problem."""
    limit = total if show == "all" else min(total, max(0, int(show)))
    shown = found[:limit]
    if not shown:
        return []
    idw = max(len(f.case_id) for f in shown)
    slw = max(len(f.slice) for f in shown)
    lines = [f"  failing cases ({total}{'' if limit >= total else f', first {limit}'}):"]
    for f in shown:
        text = " ".join(f.first_problem.split())
        if len(text) > width:
            text = text[: width - 1] + "…"
        lines.append(f"    {f.case_id:<{idw}}  {f.slice:<{slw}}  {text}")
        for c in f.checks:
            missed = [x for x in c.criteria if not x.get("met")]
            for x in missed:
                ev = (
                    f" (evidence: {json.dumps(x.get('evidence'), ensure_ascii=False)})"
                    if x.get("evidence")
                    else ""
                )
                if not ev and str(x.get("criterion")) in text:
                    continue  # the case's line says it already
                lines.append(f"    {'':<{idw}}  {'':<{slw}}    not met: {x.get('criterion')}{ev}")
    if limit < total:
        lines.append(f"    ... and {total - limit} more (--show-failures all lists them)")
    return lines
