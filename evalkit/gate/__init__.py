"""The regression gate: a run against its baseline, as an exit code and a JUnit file."""

from evalkit.gate._gate import decide, run_gate

__all__ = [
    "decide",
    "run_gate",
]
