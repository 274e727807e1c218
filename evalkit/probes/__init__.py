"""Probes of a judge's biases: position (pairwise verdicts in both orders), verbosity, injection, self-preference."""

from typing import TYPE_CHECKING

from evalkit._lazy import INTERNAL, attach
from evalkit.probes._attacks import ATTACKS, attack
from evalkit.probes._effects import (
    InjectionEffect,
    SelfPreference,
    VerbosityEffect,
    injection_effect,
    self_preference,
    verbosity_effect,
)
from evalkit.probes._live import LiveOptions
from evalkit.probes._live_position import LivePosition, position_live
from evalkit.probes._live_rubric import InjectionProbe, VerbosityProbe, injection_probe, verbosity_probe
from evalkit.probes._live_text import format_injection, format_live_position, format_verbosity
from evalkit.probes._padding import PADDINGS, pad
from evalkit.probes._paired import PairedDifference, paired_difference
from evalkit.probes._position import PositionProbe, format_position, position_from_file, position_probe
from evalkit.probes._position_table import position_by, position_table
from evalkit.probes._verdicts import read_verdicts, write_verdicts

if TYPE_CHECKING:
    from evalkit.probes._rows import consistency_rows, injection_rows, position_rows, verbosity_rows

if INTERNAL:
    from evalkit.probes._effects import AttackRate, SystemPreference
    from evalkit.probes._live_position import Pair, judge_pairs, read_pairs
    from evalkit.probes._live_rubric import attack_n_needed
    from evalkit.probes._padding import pad_filler, pad_repeat_list
    from evalkit.probes._rows import ROWS_SCHEMA

__getattr__, __dir__, __all__ = attach(__name__, __file__)
