"""The gate says whether judged results are calibrated, and with --require-calibrated fails when they are not."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from evalkit._gate import run_gate
from evalkit._runner import Runner, RunOptions
from evalkit._systems import load_system
from evalkit.calibration import calibration_state
from evalkit.suite import load_suite
from evalkit.testing.server import SimulatedJudge

ROOT = Path(__file__).resolve().parents[2]


def _judged_run(tmp_path: Path, server: Any, monkeypatch: Any, min_kappa: str) -> tuple[Path, Path]:
    suite_dir = tmp_path / "rpq"
    shutil.copytree(ROOT / "goldens" / "refund-policy-qa", suite_dir)
    toml = (suite_dir / "suite.toml").read_text()
    (suite_dir / "suite.toml").write_text(toml.replace("[judge]", f"[judge]\nmin_kappa = {min_kappa}", 1))
    assert "min_kappa" in (suite_dir / "suite.toml").read_text()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local-test-key")
    suite = load_suite(suite_dir)
    options = RunOptions(cache_dir=tmp_path / "cache", out_root=tmp_path / "runs", judge="on", progress=False)
    outcome = Runner(suite, load_system("baseline", suite), options).run()
    return suite_dir, outcome.run_dir


def test_uncalibrated_judged_results_are_said_and_can_fail_the_gate(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: Any
) -> None:
    server = make_anthropic_server(judge=SimulatedJudge())
    suite_dir, run_dir = _judged_run(tmp_path, server, monkeypatch, "0.6")
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
