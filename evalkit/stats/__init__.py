"""Statistics over result frames: pass rates with intervals, clustered and paired comparisons, power, cost."""

from evalkit.stats._stats import (
    CostLatency,
    PairedComparison,
    PowerPlan,
    case_verdicts,
    clustered_pass_rate,
    compare_runs,
    cost_latency,
    dev_vs_holdout,
    estimate_mde,
    noise_floor,
    pass_rate,
)

__all__ = [
    "CostLatency",
    "PairedComparison",
    "PowerPlan",
    "case_verdicts",
    "clustered_pass_rate",
    "compare_runs",
    "cost_latency",
    "dev_vs_holdout",
    "estimate_mde",
    "noise_floor",
    "pass_rate",
]
