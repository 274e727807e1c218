"""The results schema (one source of truth for columns and statuses) and the run directory."""

from evalkit.results._frame import CHECK_ONLY_COLUMNS, CHECK_ROW_SCHEMA, check_rows
from evalkit.results._journal import Journal
from evalkit.results._manifest import RESULTS_SCHEMA_VERSION, Manifest, git_commit
from evalkit.results._rundir import RunDir, load_run
from evalkit.results._schema import (
    CASE_STATUSES,
    CHECK_STATUSES,
    NOT_JUDGED_PREFIX,
    SCORED_STATUSES,
    CaseResult,
    CaseStatus,
    CheckResult,
    CheckStatus,
    case_status,
    is_not_judged,
    now_iso,
)

__all__ = [
    "CASE_STATUSES",
    "CHECK_ONLY_COLUMNS",
    "CHECK_ROW_SCHEMA",
    "CHECK_STATUSES",
    "NOT_JUDGED_PREFIX",
    "RESULTS_SCHEMA_VERSION",
    "SCORED_STATUSES",
    "CaseResult",
    "CaseStatus",
    "CheckResult",
    "CheckStatus",
    "Journal",
    "Manifest",
    "RunDir",
    "case_status",
    "check_rows",
    "git_commit",
    "is_not_judged",
    "load_run",
    "now_iso",
]
