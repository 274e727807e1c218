"""Probes of a judge's biases: position (pairwise verdicts in both orders), verbosity, injection, self-preference."""

from typing import TYPE_CHECKING

from evalkit.probes._attacks import ATTACKS, attack
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
from evalkit.probes._live import LiveOptions
from evalkit.probes._live_position import LivePosition, Pair, judge_pairs, position_live, read_pairs
from evalkit.probes._live_rubric import (
    InjectionProbe,
    VerbosityProbe,
    attack_n_needed,
    injection_probe,
    verbosity_probe,
)
from evalkit.probes._live_text import format_injection, format_live_position, format_verbosity
from evalkit.probes._padding import PADDINGS, pad, pad_filler, pad_repeat_list
from evalkit.probes._paired import PairedDifference, paired_difference
from evalkit.probes._position import PositionProbe, format_position, position_from_file, position_probe
from evalkit.probes._position_table import position_by, position_table
from evalkit.probes._verdicts import read_verdicts, write_verdicts

if TYPE_CHECKING:
    from evalkit.probes._charts import (
        consistency_rows,
        effect_chart,
        injection_rows,
        position_rows,
        verbosity_rows,
    )

# the charts load altair, which a command-line probe does not need
_LAZY = {
    "consistency_rows": "evalkit.probes._charts",
    "effect_chart": "evalkit.probes._charts",
    "injection_rows": "evalkit.probes._charts",
    "position_rows": "evalkit.probes._charts",
    "verbosity_rows": "evalkit.probes._charts",
}


def __getattr__(name: str) -> object:
    from evalkit._lazy import load

    return load(__name__, _LAZY, name)


__all__ = [
    "ATTACKS",
    "PADDINGS",
    "AttackRate",
    "InjectionEffect",
    "InjectionProbe",
    "LiveOptions",
    "LivePosition",
    "Pair",
    "PairedDifference",
    "PositionProbe",
    "SelfPreference",
    "SystemPreference",
    "VerbosityEffect",
    "VerbosityProbe",
    "attack",
    "attack_n_needed",
    "consistency_rows",
    "effect_chart",
    "format_injection",
    "format_live_position",
    "format_position",
    "format_verbosity",
    "injection_effect",
    "injection_probe",
    "injection_rows",
    "judge_pairs",
    "pad",
    "pad_filler",
    "pad_repeat_list",
    "paired_difference",
    "position_by",
    "position_from_file",
    "position_live",
    "position_probe",
    "position_rows",
    "position_table",
    "read_pairs",
    "read_verdicts",
    "self_preference",
    "verbosity_effect",
    "verbosity_probe",
    "verbosity_rows",
    "write_verdicts",
]
