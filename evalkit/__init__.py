"""evalkit: evaluate LLM features like unit tests, with numbers that hold up.

``import evalkit as ek`` is cheap: each name below is imported when it is first used. The verbs (``run``,
``resume``, ``estimate``, ``gate``, ``load_run``, ``load_suite``, ...) come from the front door,
``evalkit.api``, which the command line calls too.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import attach
from evalkit._version import __version__
from evalkit.errors import EvalkitError, Problem, SuiteValidationError

if TYPE_CHECKING:
    from evalkit._gate import GateOutcome, GateVerdict
    from evalkit._systems import System, load_system
    from evalkit.api import (
        HTMLReport,
        Run,
        RunComparison,
        estimate,
        gate,
        history,
        load_run,
        resume,
        run,
        run_async,
        runs,
    )
    from evalkit.graders import Grade, grade_case
    from evalkit.suite import Case, Suite, check, load_suite, validate_suite

__getattr__, __dir__, __all__ = attach(__name__, __file__)
