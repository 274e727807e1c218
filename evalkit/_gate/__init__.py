"""The regression gate: a run against its baseline, as an exit code and a JUnit file."""

from evalkit._gate._decision import ALPHA, DEFAULT_MAX_DROP, GateDecision, decide
from evalkit._gate._gate import GateOutcome, run_gate
from evalkit._gate._junit import junit_xml, write_junit

__all__ = [
    "ALPHA",
    "DEFAULT_MAX_DROP",
    "GateDecision",
    "GateOutcome",
    "decide",
    "junit_xml",
    "run_gate",
    "write_junit",
]
