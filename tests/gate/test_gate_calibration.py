"""The gate says whether judged results are calibrated, and with --require-calibrated fails when they are not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from evalkit._gate import run_gate
from evalkit.calibration import calibration_state
from evalkit.suite import load_suite


def test_uncalibrated_judged_results_are_said_and_can_fail_the_gate(judged_run: tuple[Path, Path]) -> None:
    suite_dir, run_dir = judged_run
    state = calibration_state(load_suite(suite_dir))
    assert state.state == "uncalibrated"
    said = run_gate(run_dir, suite_dir / "baseline.json", calibration=state)
    assert "judge uncalibrated" in said.text and not said.decision.failed
    strict = run_gate(run_dir, suite_dir / "baseline.json", calibration=state, require_calibrated=True)
    assert strict.decision.failed and "--require-calibrated" in strict.decision.reason
    # the command does the same, reading the state itself
    cli = [
        sys.executable,
        "-m",
        "evalkit.cli",
        "gate",
        str(run_dir),
        "--baseline",
        str(suite_dir / "baseline.json"),
    ]
    loose = subprocess.run(cli, capture_output=True, text=True, timeout=120)
    assert loose.returncode == 0 and "judge uncalibrated" in loose.stdout, loose.stdout + loose.stderr
    tight = subprocess.run([*cli, "--require-calibrated"], capture_output=True, text=True, timeout=120)
    assert tight.returncode == 1, tight.stdout + tight.stderr
