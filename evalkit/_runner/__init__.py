"""Suite x system x repeats -> a run directory: one case's execution, batches, worker processes, resume."""

from evalkit._lazy import attach
from evalkit._runner._context import RunContext, has_api_key
from evalkit._runner._estimate import Estimate, estimate_run
from evalkit._runner._execute import execute_case
from evalkit._runner._options import RunOptions
from evalkit._runner._record import RunTotals
from evalkit._runner._resume import resume_conflicts
from evalkit._runner._runner import Runner, RunOutcome
from evalkit._runner._start import new_run_id
from evalkit._runner._workers import split_cases, split_threads

__getattr__, __dir__, __all__ = attach(__name__, __file__)
