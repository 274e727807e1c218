"""`gate`: the regression gate, the same for a notebook (`Run.gate`), `evalkit gate` and `evalkit run --gate`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalkit._gate import DEFAULT_MAX_DROP
from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    from evalkit._gate import GateOutcome
    from evalkit.api._run import Run
    from evalkit.calibration import CalibrationState


def gate(
    run: Run | str | Path,
    baseline: Run | str | Path | None = None,
    *,
    max_drop: float = DEFAULT_MAX_DROP,
    require_significant: bool = False,
    allow_unscored: int = 0,
    allow_version_change: bool = False,
    require_calibrated: bool = False,
    junit: str | Path | None = None,
) -> GateOutcome:
    """The regression gate: fail when the run's pass rate fell further below the baseline's than allowed, or
    when the run cannot show it held.

    The drop is measured on the cases both sides scored. The gate fails closed: baseline cases the run errored
    on, left unscored or lacks, and a changed suite version, fail it too unless loosened below. When the run
    has judged checks, the verdict says whether the suite's judge is calibrated.

    Parameters
    ----------
    run:
        A `Run`, or a run directory.
    baseline:
        A `Run`, a run directory, a baseline.json, or a suite folder holding one (default: the baseline.json
        committed beside the run's suite).
    max_drop:
        The largest allowed drop in pass rate, as a fraction.
    require_significant:
        Fail on a drop beyond ``max_drop`` only when the paired test also calls it significant (McNemar's exact
        test; with repeats, the sign-flip test on case pass rates).
    allow_unscored:
        Tolerate up to this many baseline cases the run cannot verify (errored, unscored, missing).
    allow_version_change:
        Across suite versions, compare only the cases whose content did not change.
    require_calibrated:
        Fail when the suite sets ``[judge] min_kappa`` and the judged results are uncalibrated or stale.
    junit:
        Where to write JUnit XML (one test per case), if anywhere.

    Returns
    -------
    GateOutcome
        ``.decision`` (the verdict and its numbers), ``.exit_code`` (1 when the gate failed, as the command
        exits) and ``.text`` (what the command prints).
    """
    from evalkit._gate import run_gate
    from evalkit._results import RunDir

    run_dir = _path(run)
    manifest = RunDir(run_dir).read_manifest()
    if baseline is None:
        from evalkit.api._reference import committed_baseline

        baseline = committed_baseline(manifest.suite_location())
        if baseline is None:
            raise EvalkitError(
                f"suite {manifest.suite} has no baseline.json to gate against; accept one with "
                f"`evalkit baseline accept {run_dir}`, or pass baseline="
            )
    return run_gate(
        run_dir,
        _path(baseline),
        max_drop=max_drop,
        require_significant=require_significant,
        junit=junit,
        allow_unscored=allow_unscored,
        allow_version_change=allow_version_change,
        require_calibrated=require_calibrated,
        calibration=judge_calibration(manifest.suite_location()),
    )


def judge_calibration(suite_path: str) -> CalibrationState | None:
    """The calibration state of a suite's judge, for the gate to report (None when the suite cannot load)."""
    from evalkit.calibration import calibration_state
    from evalkit.suite import load_suite

    try:
        return calibration_state(load_suite(suite_path))
    except EvalkitError:
        return None


def _path(where: Run | str | Path) -> Path:
    from evalkit._results import local_run_dir

    return local_run_dir(where) if isinstance(where, str | Path) else where.path
