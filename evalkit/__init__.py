"""evalkit: evaluate LLM features like unit tests, with numbers that hold up.

``import evalkit as ek`` is cheap: each name below is imported when it is first used.
"""

from typing import TYPE_CHECKING

from evalkit._version import __version__
from evalkit.errors import EvalkitError, Problem, SuiteValidationError

if TYPE_CHECKING:
    from evalkit.api import HTMLReport, Run, RunComparison, history, load_run, run, run_async, runs
    from evalkit.graders import Grade, grade_case
    from evalkit.suite import Case, Suite, check, load_suite, validate_suite

_LAZY = {
    "run": "evalkit.api",
    "run_async": "evalkit.api",
    "Run": "evalkit.api",
    "RunComparison": "evalkit.api",
    "HTMLReport": "evalkit.api",
    "load_run": "evalkit.api",
    "runs": "evalkit.api",
    "history": "evalkit.api",
    "Case": "evalkit.suite",
    "Suite": "evalkit.suite",
    "check": "evalkit.suite",
    "load_suite": "evalkit.suite",
    "validate_suite": "evalkit.suite",
    "Grade": "evalkit.graders",
    "grade_case": "evalkit.graders",
}


def __getattr__(name: str) -> object:
    from evalkit._lazy import load

    return load(__name__, _LAZY, name)


__all__ = [
    "Case",
    "EvalkitError",
    "Grade",
    "HTMLReport",
    "Problem",
    "Run",
    "RunComparison",
    "Suite",
    "SuiteValidationError",
    "__version__",
    "check",
    "grade_case",
    "history",
    "load_run",
    "load_suite",
    "run",
    "run_async",
    "runs",
    "validate_suite",
]
