"""The report of a run, computed once: rates, noise floor, power, splits, costs, and the comparison if any."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalkit._baseline import Comparison, Reference, RunInfo, compare, max_repeats, run_info
from evalkit._report._failures import Failure, count_failures, failures, flaky_cases
from evalkit._report._format import is_nan
from evalkit._results import Manifest, judge_criteria, prompt_cache_use
from evalkit.errors import EvalkitError
from evalkit.stats import (
    CostLatency,
    PowerPlan,
    case_verdicts,
    clustered_pass_rate,
    cost_latency,
    dev_vs_holdout,
    estimate_mde,
    noise_floor,
    pass_rate,
)

# how many failing cases a report keeps for the HTML table; the terminal reads its own, shorter list
MAX_FAILURES = 2000

if TYPE_CHECKING:
    from evalkit.calibration import JudgeTrust


@dataclass(frozen=True, eq=False)
class Report:
    """Everything the terminal and HTML reports show, computed once."""

    manifest: Manifest
    rows: pl.DataFrame
    info: RunInfo
    verdicts: pl.DataFrame
    repeats: int
    overall: dict[str, Any]
    slice_rates: pl.DataFrame
    noise: dict[str, Any] | None
    power: PowerPlan
    splits: dict[str, Any]
    costs: CostLatency
    comparison: Comparison | None = None
    warnings: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    """The failing or errored cases (the first ``MAX_FAILURES``), with their checks (and the judge's criteria
    when the run dir was given)."""
    failure_count: int = 0
    flaky: list[str] = field(default_factory=list)
    """Case ids whose verdict differs across repeats."""
    criteria: dict[tuple[str, int, int], list[dict[str, Any]]] = field(default_factory=dict)
    judge: JudgeTrust | None = None
    prompt_cache: Any = None
    """The system calls' prompt-cache split (``PromptCacheUse``), None when they wrote and read nothing."""
    """The judge's calibration state and corrected pass rates (None: not given, or no judged check)."""


def build_report(
    manifest: Manifest,
    rows: pl.DataFrame,
    reference: Reference | None = None,
    *,
    run_dir: str | Path | None = None,
    judge: JudgeTrust | None = None,
) -> Report:
    """Compute the report of one run, against a reference run or baseline.json when given.

    Parameters
    ----------
    manifest, rows: the run.
    reference: what to compare it with, if anything.
    run_dir: the run's folder, to read the judge's per-criterion verdicts from its results.jsonl.
    judge: the judge's calibration state and corrected pass rates (``evalkit.calibration.judge_trust``).

    Returns
    -------
    The Report.
    """
    if rows.is_empty():
        raise EvalkitError(f"run {manifest.run_id} has no results to report")
    info = run_info(manifest, rows)
    verdicts = case_verdicts(rows)
    repeats = max_repeats(verdicts)
    # With repeats the case, not the row, is the independent unit: intervals must be clustered.
    rate_fn = clustered_pass_rate if repeats > 1 else pass_rate
    overall = rate_fn(verdicts).row(0, named=True)
    slice_rates = rate_fn(verdicts, by="slice")
    noise = noise_floor(verdicts).row(0, named=True) if repeats > 1 else None
    comparison = compare(info, verdicts, reference) if reference is not None else None
    power = estimate_mde(verdicts, info.run_id)
    if comparison is not None:
        paired = estimate_mde(comparison.verdicts, comparison.run_a, comparison.run_b)
        # with no discordant pairs the paired variance is zero and says nothing about the next change;
        # the unpaired estimate is the honest (conservative) figure then
        if not (is_nan(paired.mde) or paired.mde == 0.0):
            power = paired
    splits = dev_vs_holdout(verdicts).row(0, named=True)
    costs = cost_latency(rows)
    if comparison is not None and comparison.reference.rows is not None:
        ref_costs = cost_latency(comparison.reference.rows)
        costs = CostLatency(
            by_run=pl.concat(
                [ref_costs.by_run.with_columns(pl.lit(comparison.run_a).alias("run_id")), costs.by_run]
            ),
            by_tier=pl.concat(
                [ref_costs.by_tier.with_columns(pl.lit(comparison.run_a).alias("run_id")), costs.by_tier]
            ),
        )
    criteria = judge_criteria(run_dir) if run_dir is not None else {}
    warnings = []
    if manifest.status != "complete":
        warnings.append(f"run {manifest.run_id} is {manifest.status}: cases may be missing")
    return Report(
        manifest=manifest,
        rows=rows,
        info=info,
        verdicts=verdicts,
        repeats=repeats,
        overall=overall,
        slice_rates=slice_rates,
        noise=noise,
        power=power,
        splits=splits,
        costs=costs,
        comparison=comparison,
        warnings=warnings,
        failures=failures(rows, criteria, limit=MAX_FAILURES),
        failure_count=count_failures(rows),
        flaky=flaky_cases(verdicts) if repeats > 1 else [],
        criteria=criteria,
        judge=judge,
        prompt_cache=prompt_cache_use(run_dir, manifest) if run_dir is not None else None,
    )
