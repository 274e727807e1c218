"""The results schema (one source of truth for columns, statuses and error kinds) and the run directory.

The models, statuses and error kinds import without polars (graders use them); the frame and the run directory
load it when first used."""

from typing import TYPE_CHECKING

from evalkit._lazy import attach
from evalkit._results._error_kinds import ERROR_KINDS, ErrorKind, error_kind
from evalkit._results._manifest import RESULTS_SCHEMA_VERSION, Manifest, git_commit, relative_to_cwd
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
    from evalkit._results._criteria import criteria_of, judge_criteria
    from evalkit._results._frame import CHECK_ONLY_COLUMNS, CHECK_ROW_SCHEMA, check_rows
    from evalkit._results._journal import Journal
    from evalkit._results._prompt_cache_use import PromptCacheUse, prompt_cache_use
    from evalkit._results._run_folder import RunFolder, RunLike, load_run_like
    from evalkit._results._rundir import RunDir, local_run_dir, read_run

__getattr__, __dir__, __all__ = attach(__name__, __file__)
