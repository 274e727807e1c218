"""The gate says whether judged results are calibrated, and with --require-calibrated fails when they are not."""

from __future__ import annotations

import json
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


def _gate_cli(run_dir: Path, suite_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    cli = [
        sys.executable,
        "-m",
        "evalkit.cli",
        "gate",
        str(run_dir),
        "--baseline",
        str(suite_dir / "baseline.json"),
    ]
    return subprocess.run([*cli, *extra], capture_output=True, text=True, timeout=120)


def test_a_calibration_against_the_simulated_judge_never_calibrates_claude(
    judged_run: tuple[Path, Path],
) -> None:
    from evalkit.calibration import calibrate, calibration_record, write_calibration_record

    suite_dir, run_dir = judged_run
    toml = (suite_dir / "suite.toml").read_text()
    (suite_dir / "suite.toml").write_text(toml.replace("min_kappa = 0.6", "min_kappa = -1"))
    record = calibration_record(calibrate(run_dir, suite_dir / "labels" / "baseline.jsonl", n_boot=20))
    # the record names the model that answered, not the one asked for
    assert record.judge_model == "claude-opus-4-6" and record.answered_by == ["simulated-judge"]
    write_calibration_record(record, suite_dir / "labels" / "calibration.json")
    state = calibration_state(load_suite(suite_dir))
    assert state.state == "uncalibrated" and "simulated-judge" in state.reason
    tight = _gate_cli(run_dir, suite_dir, "--require-calibrated")
    assert tight.returncode == 1 and "judge calibrated" not in tight.stdout, tight.stdout + tight.stderr
    assert "--require-calibrated" in tight.stdout
    # an older record naming a check it has no kappa for: stale and ignored, not a KeyError
    data = record.model_dump(mode="json") | {"check": "nope"}
    (suite_dir / "labels" / "calibration.json").write_text(json.dumps(data), encoding="utf-8")
    loose = _gate_cli(run_dir, suite_dir)
    assert loose.returncode == 0 and "Traceback" not in loose.stderr, loose.stdout + loose.stderr
    assert "judge stale: stale record ignored" in loose.stdout
