"""evalkit: evaluate LLM features like unit tests, with numbers that hold up."""

from evalkit.cases import Case
from evalkit.errors import EvalkitError, Problem, SuiteValidationError
from evalkit.graders import Grade, grade_case
from evalkit.registry import check
from evalkit.suite import Suite, load_suite, validate_suite

__version__ = "0.1.0"

__all__ = [
    "Case",
    "EvalkitError",
    "Grade",
    "Problem",
    "Suite",
    "SuiteValidationError",
    "__version__",
    "check",
    "grade_case",
    "load_suite",
    "validate_suite",
]
