"""The regression gate for CI: fail when a run's pass rate falls further below its baseline than allowed.

The drop is measured on the case ids both sides share and scored (paired, B - A), so a suite that grew or
lost cases is still compared like for like. With ``require_significant`` a drop must also be significant by
McNemar's exact test, so a noisy suite does not fail a pull request on a coin flip.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from evalkit.baseline import Comparison, compare, load_reference, majority_verdicts, run_info
from evalkit.errors import EvalkitError
from evalkit.gate._decision import ALPHA, DEFAULT_MAX_DROP, GateDecision, decide
from evalkit.gate._junit import write_junit
from evalkit.report import comparison_lines
from evalkit.results import load_run
from evalkit.stats import case_verdicts


@dataclass(frozen=True, eq=False)
class GateOutcome:
    """The decision, the comparison behind it, and the text the command prints."""

    decision: GateDecision
    comparison: Comparison
    text: str

    @property
    def exit_code(self) -> int:
        return 1 if self.decision.failed else 0


def run_gate(
    run: str | Path,
    baseline: str | Path,
    max_drop: float = DEFAULT_MAX_DROP,
    require_significant: bool = False,
    junit: str | Path | None = None,
    alpha: float = ALPHA,
) -> GateOutcome:
    """Gate a finished run against a baseline (run directory or baseline.json); write JUnit XML if asked."""
    if not 0.0 <= max_drop < 1.0:
        raise EvalkitError(f"--max-drop must be a fraction in [0, 1), got {max_drop}")
    manifest, rows = load_run(run)
    if rows.is_empty():
        raise EvalkitError(f"{run}: the run has no results")
    if manifest.status != "complete":
        raise EvalkitError(
            f"run {manifest.run_id} is {manifest.status}, not complete: a gate on part of the suite would "
            f"pass on missing cases. Finish it with `evalkit run --resume {run}`."
        )
    reference = load_reference(baseline)
    info = run_info(manifest, rows)
    verdicts = case_verdicts(rows)
    comparison = compare(info, verdicts, reference)
    decision = decide(comparison.paired, max_drop, require_significant, alpha)

    lines = list(comparison.drift)
    if comparison.version_warning:
        lines.append(f"warning: {comparison.version_warning}")
    errors_now = _errored_cases(verdicts)
    errors_then = _errored_cases(reference.verdicts)
    if errors_now > errors_then:
        lines.append(
            f"warning: {_cases(errors_now)} errored in this run ({errors_then} in the baseline); errored cases "
            "are left out of the pass rate and the paired comparison, so check them before trusting a pass"
        )
    if lines:
        lines.append("")
    lines.append(f"gate: {manifest.suite} run {manifest.run_id}")
    lines.extend(comparison_lines(comparison))
    lines.append(decision.reason)
    if junit is not None:
        write_junit(junit, manifest, rows, decision, comparison)
        lines.append(f"JUnit XML written to {junit}")
    return GateOutcome(decision, comparison, "\n".join(lines))


def _cases(n: int) -> str:
    return f"{n} case{'' if n == 1 else 's'}"


def _errored_cases(verdicts: pl.DataFrame) -> int:
    return int((majority_verdicts(verdicts).get_column("status") == "error").sum())
