"""The regression gate: a run against its baseline, as an exit code and a JUnit file."""

from evalkit._gate._decision import ALPHA, DEFAULT_MAX_DROP, GateDecision, decide
from evalkit._gate._gate import GateOutcome, run_gate
from evalkit._gate._junit import junit_xml, write_junit
from evalkit._lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, __file__)
