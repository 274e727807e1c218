"""Results written by an older evalkit, read as they would be written now: the one place old spellings live.

Schema version 1 (before ``RESULTS_SCHEMA_VERSION`` 2) differed in three ways:

- a judge check that could not run for want of a judge was ``status="skipped"`` with a ``skipped_reason``
  starting "not judged"; it is now ``status="not_judged"`` (the reason is kept);
- errors had no ``error_kind``: it is derived from the message, which began with the exception's type name;
- results.parquet had no ``judge_criteria`` column (the journal kept them): it reads as null.

Every reader goes through here: a journal line through :class:`CaseResult`'s validator (so
``RunDir.read_journal``, resume and ``finish`` alike), a parquet file through :func:`upgrade_frame`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from evalkit._results._error_kinds import ErrorKind, error_kind_of_message

if TYPE_CHECKING:
    import polars as pl

LEGACY_NOT_JUDGED: Final = "not judged"
"""How schema 1 said "not judged": the start of a skipped check's skipped_reason."""
ADDED_COLUMNS: Final = frozenset({"case_error_kind", "error_kind", "judge_criteria"})
"""The frame columns schema 2 added: a parquet file missing only these is a schema-1 file."""


def is_legacy_not_judged(status: str | None, skipped_reason: str | None) -> bool:
    return status == "skipped" and (skipped_reason or "").startswith(LEGACY_NOT_JUDGED)


def case_error_kind(error: str) -> ErrorKind:
    return error_kind_of_message(error, "system_exception")


def check_error_kind(error: str, case_error: str | None, tier: str | None) -> ErrorKind:
    """A case without an output gives each of its checks the case's own error; any other check error is the
    check's (a judge check's, unless its call or cache failed, is the judge's)."""
    if error == case_error:
        return case_error_kind(error)
    return error_kind_of_message(error, "judge_error" if tier == "judge" else "check_exception")


def upgrade_case(result: Any) -> None:
    """Bring a :class:`CaseResult` read from an old journal line up to date, in place (a new one is unchanged)."""
    if result.error is not None and result.error_kind is None:
        result.error_kind = case_error_kind(result.error)
    for c in result.checks:
        if is_legacy_not_judged(c.status, c.skipped_reason):
            c.status = "not_judged"
        if c.error is not None and c.error_kind is None:
            c.error_kind = check_error_kind(c.error, result.error, c.tier)


def upgrade_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """An old results.parquet (missing some of ``ADDED_COLUMNS``) with those columns made as a new run has them."""
    import polars as pl

    if "case_error_kind" not in frame.columns:
        errors = frame.get_column("case_error").drop_nulls().unique().to_list()
        kinds = {e: case_error_kind(e) for e in errors}
        frame = frame.with_columns(
            pl.col("case_error")
            .replace_strict(kinds, default=None, return_dtype=pl.String)
            .alias("case_error_kind")
        )
    if "error_kind" not in frame.columns:
        keys = frame.select("error", "case_error", "tier").filter(pl.col("error").is_not_null()).unique()
        kinds_of = keys.with_columns(
            pl.Series(
                "error_kind",
                [check_error_kind(e, ce, t) for e, ce, t in keys.iter_rows()],
                dtype=pl.String,
            )
        )
        frame = frame.join(
            kinds_of, on=["error", "case_error", "tier"], how="left", nulls_equal=True, maintain_order="left"
        )
    if "judge_criteria" not in frame.columns:
        frame = frame.with_columns(pl.lit(None).alias("judge_criteria"))
    legacy = (pl.col("status") == "skipped") & pl.col("skipped_reason").str.starts_with(LEGACY_NOT_JUDGED)
    return frame.with_columns(
        pl.when(legacy.fill_null(False))
        .then(pl.lit("not_judged"))
        .otherwise(pl.col("status"))
        .alias("status")
    )
