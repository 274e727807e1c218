"""Probes of a judge's biases: position (pairwise verdicts in both orders), verbosity, injection, self-preference."""

from evalkit.probes._effects import (
    AttackRate,
    InjectionEffect,
    SelfPreference,
    SystemPreference,
    VerbosityEffect,
    injection_effect,
    self_preference,
    verbosity_effect,
)
from evalkit.probes._paired import (
    PairedDifference,
    mcnemar_exact,
    n_needed,
    newcombe_paired,
    paired_difference,
)
from evalkit.probes._position import PositionProbe, format_position, position_from_file, position_probe
from evalkit.probes._verdicts import read_verdicts, write_verdicts

__all__ = [
    "AttackRate",
    "InjectionEffect",
    "PairedDifference",
    "PositionProbe",
    "SelfPreference",
    "SystemPreference",
    "VerbosityEffect",
    "format_position",
    "injection_effect",
    "mcnemar_exact",
    "n_needed",
    "newcombe_paired",
    "paired_difference",
    "position_from_file",
    "position_probe",
    "read_verdicts",
    "self_preference",
    "verbosity_effect",
    "write_verdicts",
]
