"""Suite x system x repeats -> a run directory: one case's execution, batches, worker processes, resume."""

from evalkit.runner._estimate import estimate_run
from evalkit.runner._runner import Runner, RunOptions, new_run_id
from evalkit.runner._workers import split_cases, split_threads

__all__ = [
    "RunOptions",
    "Runner",
    "estimate_run",
    "new_run_id",
    "split_cases",
    "split_threads",
]
