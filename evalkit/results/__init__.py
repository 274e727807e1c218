"""The results schema (one source of truth for columns and statuses) and the run directory."""

from evalkit.results._results import (
    CHECK_ROW_SCHEMA,
    CaseResult,
    CaseStatus,
    CheckResult,
    Journal,
    Manifest,
    RunDir,
    case_status,
    git_commit,
    load_run,
    now_iso,
)

__all__ = [
    "CHECK_ROW_SCHEMA",
    "CaseResult",
    "CaseStatus",
    "CheckResult",
    "Journal",
    "Manifest",
    "RunDir",
    "case_status",
    "git_commit",
    "load_run",
    "now_iso",
]
