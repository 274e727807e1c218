"""The regression gate: a run against its baseline, as an exit code and a JUnit file.

The rule and its defaults load with the package (the command line's options need them to start); the gate
itself and the JUnit writer, which need polars, load on first use."""

from typing import TYPE_CHECKING

from evalkit._gate._decision import (
    ALPHA,
    DEFAULT_MAX_DROP,
    GateDecision,
    GateVerdict,
    decide,
    render_reason,
)
from evalkit._lazy import attach

if TYPE_CHECKING:
    from evalkit._gate._gate import GateOutcome, run_gate
    from evalkit._gate._junit import junit_xml, write_junit

__getattr__, __dir__, __all__ = attach(__name__, __file__)
