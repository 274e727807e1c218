"""What a score is a score of (a run's identity) and the per-case majority verdicts both sides of a comparison share."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from evalkit._results import Manifest

# The columns both sides of a comparison share: a run's case verdicts, or a baseline's stored verdicts.
VERDICT_COLUMNS = ("run_id", "case_id", "repeat", "slice", "split", "status")


@dataclass(frozen=True)
class RunInfo:
    """What a score is a score of: enough to tell a change of ours from a change of the model's."""

    run_id: str
    suite: str
    suite_version: str
    started_at: str | None
    system_name: str | None
    system_model: str | None
    system_model_versions: tuple[str, ...]
    prompt_hash: str | None
    judge_model: str | None
    judge_model_versions: tuple[str, ...]
    status: str = "complete"
    code_hash: str | None = None
    judge_prompt_hash: str | None = None


def _versions(rows: pl.DataFrame, column: str) -> tuple[str, ...]:
    if column not in rows.columns:
        return ()
    return tuple(sorted(str(v) for v in rows.get_column(column).drop_nulls().unique().to_list()))


def run_info(manifest: Manifest, rows: pl.DataFrame) -> RunInfo:
    """A run's identity from its manifest, with the model versions the API actually resolved."""
    judge = manifest.judge or {}
    return RunInfo(
        run_id=manifest.run_id,
        suite=manifest.suite,
        suite_version=manifest.suite_version,
        started_at=manifest.started_at,
        system_name=manifest.system.get("name"),
        system_model=manifest.system.get("model"),
        system_model_versions=_versions(rows, "system_model_version"),
        prompt_hash=manifest.system.get("prompt_hash"),
        judge_model=judge.get("model"),
        judge_model_versions=_versions(rows, "judge_model_version"),
        status=manifest.status,
        code_hash=manifest.system.get("code_hash"),
        judge_prompt_hash=judge.get("prompt_hash"),
    )


def majority_verdicts(verdicts: pl.DataFrame) -> pl.DataFrame:
    """One verdict per case from (case x repeat) verdicts.

    pass when more than half the scored repeats pass and fail otherwise (a tie fails), the rule
    ``compare_runs`` uses; with no scored repeat, error if any repeat errored, else not_scored.
    Columns: case_id, slice, split, repeats, scored, passes, status.
    """
    s = pl.col("status")
    out = verdicts.group_by("case_id").agg(
        pl.col("slice").first(),
        pl.col("split").first(),
        pl.len().cast(pl.Int64).alias("repeats"),
        s.is_in(["pass", "fail"]).sum().cast(pl.Int64).alias("scored"),
        (s == "pass").sum().cast(pl.Int64).alias("passes"),
        (s == "error").any().alias("_any_error"),
    )
    status = (
        pl.when(pl.col("scored") > 0)
        .then(pl.when(2 * pl.col("passes") > pl.col("scored")).then(pl.lit("pass")).otherwise(pl.lit("fail")))
        .when(pl.col("_any_error"))
        .then(pl.lit("error"))
        .otherwise(pl.lit("not_scored"))
    )
    return out.with_columns(status.alias("status")).drop("_any_error").sort("case_id")


def max_repeats(verdicts: pl.DataFrame) -> int:
    """The most verdicts any case has (1 for an empty frame)."""
    if verdicts.is_empty():
        return 1
    return int(verdicts.group_by("case_id").len().select(pl.col("len").max()).item() or 1)
