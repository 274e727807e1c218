"""Suite x system x repeats -> a run directory: one case's execution, batches, worker processes, resume."""

from evalkit._runner._context import RunContext, has_api_key
from evalkit._runner._estimate import estimate_run
from evalkit._runner._execute import execute_case
from evalkit._runner._options import RunOptions
from evalkit._runner._record import RunTotals
from evalkit._runner._runner import Runner, RunOutcome
from evalkit._runner._start import new_run_id
from evalkit._runner._workers import split_cases, split_threads

__all__ = [
    "RunContext",
    "RunOptions",
    "RunOutcome",
    "RunTotals",
    "Runner",
    "estimate_run",
    "execute_case",
    "has_api_key",
    "new_run_id",
    "split_cases",
    "split_threads",
]
