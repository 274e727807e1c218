"""The check-level frame: its columns, derived from the result models, and the flattening into it.

One journal line per (case, repeat) carries the case-level facts and a list of check results; the frame and
results.parquet have one row per (case, repeat, check). Which model fields become which columns, in which
order, is declared here and nowhere else; the polars types follow from the models' annotations.
"""

from __future__ import annotations

import io
import json
import types
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, Literal, Union, get_args, get_origin

import polars as pl
from pydantic import BaseModel

from evalkit._results._schema import CaseResult, CheckResult

# Case fields the frame carries, in column order; renamed where a check field has the same name.
_CASE_FIELDS: Final = (
    "run_id",
    "suite",
    "suite_version",
    "case_id",
    "slice",
    "split",
    "repeat",
    "status",
    "system",
    "system_model",
    "system_model_version",
    "output",
    "output_hash",
    "error",
    "error_kind",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "latency_s",
    "cache_hit",
)
_CASE_RENAMES: Final = {"status": "case_status", "error": "case_error", "error_kind": "case_error_kind"}
# Left out of the frame (they stay in the journal): per-request bookkeeping and the nested checks.
CASE_FIELDS_NOT_IN_FRAME: Final = frozenset(
    {"request_id", "cache_read_tokens", "cache_write_tokens", "checks", "finished_at"}
)
_CHECK_RENAMES: Final = {
    "index": "check_index",
    "kind": "check_kind",
    "name": "check_name",
    "field": "check_field",
}
CHECK_FIELDS_NOT_IN_FRAME: Final = frozenset[str]()

CRITERIA_DTYPE: Final = pl.List(pl.Struct({"criterion": pl.String, "met": pl.Boolean, "evidence": pl.String}))
"""``judge_criteria``: the judge's verdict on each rubric criterion, as the rubric verdict gives them (a list of
structs, not JSON text, so that polars can filter and explode them without parsing; keys beyond these three
stay in the journal only)."""
# fields whose annotation says too little for a column type: a list of dicts
_NESTED: Final[Mapping[str, Any]] = {"judge_criteria": CRITERIA_DTYPE}
_SCALARS: Final[Mapping[Any, Any]] = {str: pl.String, int: pl.Int64, float: pl.Float64, bool: pl.Boolean}


def _dtype(model: type[BaseModel], name: str) -> Any:
    """The polars type of a model field: its annotation without None; a free-form value is stored as JSON text."""
    if name in _NESTED:
        return _NESTED[name]
    annotation = model.model_fields[name].annotation
    if get_origin(annotation) in (Union, types.UnionType):
        (annotation,) = [a for a in get_args(annotation) if a is not type(None)]
    if annotation is Any:
        return pl.String
    if get_origin(annotation) is Literal:
        return pl.String
    try:
        return _SCALARS[annotation]
    except KeyError:
        raise TypeError(f"{model.__name__}.{name}: no frame column type for {annotation!r}") from None


CASE_COLUMNS: Final[dict[str, str]] = {f: _CASE_RENAMES.get(f, f) for f in _CASE_FIELDS}
"""Case model field -> frame column, in column order."""
CHECK_COLUMNS: Final[dict[str, str]] = {
    f: _CHECK_RENAMES.get(f, f) for f in CheckResult.model_fields if f not in CHECK_FIELDS_NOT_IN_FRAME
}
"""Check model field -> frame column, in column order (after the case columns)."""
CHECK_ONLY_COLUMNS: Final[tuple[str, ...]] = tuple(_CHECK_RENAMES.values())
"""Columns that only a check-level frame has: a frame with one is one row per check, not per case."""
CHECK_ROW_SCHEMA: Final[dict[str, Any]] = {
    **{col: _dtype(CaseResult, f) for f, col in CASE_COLUMNS.items()},
    **{col: _dtype(CheckResult, f) for f, col in CHECK_COLUMNS.items()},
}
"""Column name -> polars type of the check-level frame and of results.parquet."""


def rows_of(results: Iterable[CaseResult | dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Check-level rows from case results, given as models or as their decoded journal lines."""
    for item in results:
        if isinstance(item, CaseResult):
            r = item.model_dump(mode="json")
        elif (
            "error_kind" not in item
        ):  # journalled by an older evalkit: read through the model, which upgrades it
            r = CaseResult.model_validate(item).model_dump(mode="json")
        else:
            r = item
        base = {col: r.get(f) for f, col in CASE_COLUMNS.items()}
        output = r.get("output")
        base["output"] = json.dumps(output, ensure_ascii=False) if output is not None else None
        base["cache_hit"] = bool(r.get("cache_hit"))
        for c in r.get("checks") or []:
            yield base | {col: c.get(f) for f, col in CHECK_COLUMNS.items()}


def frame_of(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows from :func:`rows_of` as a frame of the check-level schema (an empty list gives an empty frame)."""
    return pl.DataFrame(rows, schema=CHECK_ROW_SCHEMA)


def check_rows(results: Iterable[CaseResult]) -> pl.DataFrame:
    """Flatten case results to the check-level frame (one row per case x repeat x check).

    Parameters
    ----------
    results:
        Case results, as the runner returns them or :meth:`RunDir.read_journal` reads them.

    Returns
    -------
    A frame with the columns of ``CHECK_ROW_SCHEMA``, in that order.
    """
    return frame_of(list(rows_of(results)))


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.write_parquet(buf)
    return buf.getvalue()
