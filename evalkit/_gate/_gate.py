"""The regression gate for CI: fail when a run's pass rate falls further below its baseline than allowed.

The drop is measured on the case ids both sides share and scored (paired, B - A), so a suite that grew or
lost cases is still compared like for like. With ``require_significant`` a drop must also be significant by
the paired test (McNemar's exact test with one repeat, the sign-flip test on case pass rates with repeats), so a
noisy suite does not fail a pull request on a coin flip.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import polars as pl

from evalkit._baseline import (
    Comparison,
    compare,
    load_reference,
    majority_verdicts,
    run_info,
    same_suite,
    suite_case_hashes,
)
from evalkit._gate._decision import ALPHA, DEFAULT_MAX_DROP, GateDecision, GateVerdict, decide
from evalkit._gate._junit import write_junit
from evalkit._gate._verify import Verification, verify
from evalkit._report import comparison_lines
from evalkit._results import read_run
from evalkit.errors import EvalkitError
from evalkit.stats import case_verdicts


@dataclass(frozen=True, eq=False)
class GateOutcome:
    """The decision, the comparison behind it, what could not be verified, and the text the command prints."""

    decision: GateDecision
    comparison: Comparison
    verification: Verification
    lines: tuple[str, ...]
    """What the command prints above the verdict: drift and warnings, the comparison, what could not be
    verified, the judge's calibration."""
    junit: str | Path | None = None
    """Where the JUnit XML was written, if anywhere."""

    @property
    def text(self) -> str:
        """What ``evalkit gate`` prints: the lines, the verdict in words, and where the JUnit XML went."""
        written = [f"JUnit XML written to {self.junit}"] if self.junit is not None else []
        return "\n".join([*self.lines, self.decision.reason, *written])

    @property
    def exit_code(self) -> int:
        return 1 if self.decision.failed else 0


class CalibrationLike(Protocol):
    """What the gate reads of a judge's calibration state."""

    @property
    def state(self) -> str: ...


def run_gate(
    run: str | Path,
    baseline: str | Path,
    max_drop: float = DEFAULT_MAX_DROP,
    require_significant: bool = False,
    junit: str | Path | None = None,
    alpha: float = ALPHA,
    *,
    allow_unscored: int = 0,
    allow_version_change: bool = False,
    require_calibrated: bool = False,
    calibration: CalibrationLike | None = None,
) -> GateOutcome:
    """Gate a finished run against a baseline (run directory or baseline.json); write JUnit XML if asked.

    The gate fails closed: besides a drop beyond ``max_drop``, it fails when the run cannot show the pass
    rate held, that is when baseline-scored cases errored or went unscored (judge checks not judged), baseline
    cases are missing from the run, or the suite version changed.

    Parameters
    ----------
    run, baseline: the run directory, and a run directory or baseline.json (or a suite folder holding one).
    max_drop, require_significant, alpha: the rule on the paired pass rate (see ``decide``).
    junit: where to write JUnit XML, if anywhere.
    allow_unscored: tolerate up to this many baseline cases the run cannot verify.
    allow_version_change: across suite versions, compare only the cases whose content did not change
        (needs per-case hashes in the baseline).
    require_calibrated: fail when `calibration` says the judged results are uncalibrated or stale.
    calibration: the suite's judge calibration state (``evalkit.calibration.calibration_state``); the
        verdict says it when the run has judged checks.

    Returns
    -------
    The GateOutcome; its ``exit_code`` is 1 when the gate failed.
    """
    if not 0.0 <= max_drop < 1.0:
        raise EvalkitError(f"--max-drop must be a fraction in [0, 1), got {max_drop}")
    if allow_unscored < 0:
        raise EvalkitError(f"--allow-unscored must be a count of cases, 0 or more, got {allow_unscored}")
    manifest, rows = read_run(run)
    if rows.is_empty():
        raise EvalkitError(f"{run}: the run has no results")
    if manifest.status != "complete":
        raise EvalkitError(
            f"run {manifest.run_id} is {manifest.status}, not complete: a gate on part of the suite would "
            f"pass on missing cases. Finish it with `evalkit run --resume {run}`."
        )
    reference = load_reference(baseline)
    info = run_info(manifest, rows)
    same_suite(info, reference)
    verdicts = case_verdicts(rows)
    version_changed = reference.info.suite_version != info.suite_version
    run_hashes = (
        suite_case_hashes(manifest.suite_path, manifest.suite_version)
        if version_changed and allow_version_change
        else None
    )
    check = verify(
        rows,
        verdicts,
        reference,
        version_changed=version_changed,
        run_hashes=run_hashes,
        allow_unscored=allow_unscored,
        allow_version_change=allow_version_change,
    )
    compared = verdicts
    if check.changed:
        # cases whose content changed are other cases now: neither side's verdict on them says anything
        gone = pl.col("case_id").is_in(check.changed)
        compared = verdicts.filter(~gone)
        reference = replace(reference, verdicts=reference.verdicts.filter(~gone))
    comparison = compare(info, compared, reference)
    if comparison.paired.n == 0 and check.failed:
        # nothing to gate on is still an exit 2, as before; the message now says what could not be verified
        detail = "\n".join(check.lines(str(run)))
        raise EvalkitError(
            f"the run and the baseline share no scored case; there is nothing to gate on\n{detail}"
        )
    decision = decide(comparison.paired, max_drop, require_significant, alpha)
    decision = replace(
        decision,
        verdict=GateVerdict.FAIL_UNVERIFIED if check.failed else decision.verdict,
        unverified=len(check.unverified),
        allow_unscored=allow_unscored,
        allow_version_change=allow_version_change,
        require_calibrated=require_calibrated,
    )

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
    lines.extend(check.lines(str(run)))
    judged = rows.filter(pl.col("check_kind") == "judge").height > 0
    state = calibration if judged else None
    if state is not None and state.state != "not required":
        lines.append(str(state))
        decision = replace(decision, calibration=state.state)
        if require_calibrated and state.state in ("uncalibrated", "stale") and not decision.failed:
            decision = replace(decision, verdict=GateVerdict.FAIL_UNCALIBRATED)
    if junit is not None:
        write_junit(junit, manifest, rows, decision, comparison, verification=check)
    return GateOutcome(decision, comparison, check, tuple(lines), junit)


def _cases(n: int) -> str:
    return f"{n} case{'' if n == 1 else 's'}"


def _errored_cases(verdicts: pl.DataFrame) -> int:
    return int((majority_verdicts(verdicts).get_column("status") == "error").sum())
