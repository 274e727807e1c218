"""Baselines and references: the baseline.json file, and the comparison of a run with a reference."""

from evalkit.baseline._baseline import (
    VERDICT_COLUMNS,
    Reference,
    RunInfo,
    accept,
    load_baseline,
    load_reference,
    majority_verdicts,
    max_repeats,
    run_info,
)

__all__ = [
    "VERDICT_COLUMNS",
    "Reference",
    "RunInfo",
    "accept",
    "load_baseline",
    "load_reference",
    "majority_verdicts",
    "max_repeats",
    "run_info",
]
