"""The results schema (one source of truth for columns, statuses and error kinds) and the run directory.

The models, statuses and error kinds import without polars (graders use them); the frame and the run directory
load it when first used."""

from typing import TYPE_CHECKING

from evalkit._results._error_kinds import ERROR_KINDS, ErrorKind, error_kind
from evalkit._results._manifest import RESULTS_SCHEMA_VERSION, Manifest, git_commit
from evalkit._results._schema import (
    CASE_STATUSES,
    CHECK_STATUSES,
    NOT_RUN_STATUSES,
    SCORED_STATUSES,
    CaseResult,
    CaseStatus,
    CheckResult,
    CheckStatus,
    case_status,
    now_iso,
)

if TYPE_CHECKING:
    from evalkit._results._frame import CHECK_ONLY_COLUMNS, CHECK_ROW_SCHEMA, check_rows
    from evalkit._results._journal import Journal
    from evalkit._results._rundir import RunDir, load_run

_LAZY = {
    "CHECK_ONLY_COLUMNS": "evalkit._results._frame",
    "CHECK_ROW_SCHEMA": "evalkit._results._frame",
    "check_rows": "evalkit._results._frame",
    "Journal": "evalkit._results._journal",
    "RunDir": "evalkit._results._rundir",
    "load_run": "evalkit._results._rundir",
}


def __getattr__(name: str) -> object:
    from evalkit._lazy import load

    return load(__name__, _LAZY, name)


__all__ = [
    "CASE_STATUSES",
    "CHECK_ONLY_COLUMNS",
    "CHECK_ROW_SCHEMA",
    "CHECK_STATUSES",
    "ERROR_KINDS",
    "NOT_RUN_STATUSES",
    "RESULTS_SCHEMA_VERSION",
    "SCORED_STATUSES",
    "CaseResult",
    "CaseStatus",
    "CheckResult",
    "CheckStatus",
    "ErrorKind",
    "Journal",
    "Manifest",
    "RunDir",
    "case_status",
    "check_rows",
    "error_kind",
    "git_commit",
    "load_run",
    "now_iso",
]
