"""The gate tests' shared inputs: synthetic runs, a fail-closed suite with its accepted baseline, a judged run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from gated_suite import N as GATED_N
from gated_suite import case, judge_responder, run, write_suite
from synthetic_runs import BASE, NOISY_3, REGRESS_1, REGRESS_3, make_run

from evalkit._baseline import accept
from evalkit._runner import Runner, RunOptions
from evalkit._systems import load_system
from evalkit.suite import load_suite
from evalkit.testing.server import SimulatedJudge

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gate")
    return {
        "base": make_run(root, "base", BASE),
        "regress3": make_run(root, "regress3", REGRESS_3),
        "regress1": make_run(root, "regress1", REGRESS_1),
        "noisy3": make_run(root, "noisy3", NOISY_3),
        "newversion": make_run(root, "newversion", REGRESS_1, suite_version="v2"),
        "othersuite": make_run(root, "othersuite", BASE, suite="other"),
        "unfinished": make_run(root, "unfinished", BASE, status="interrupted"),
        "root": root,
    }


@pytest.fixture
def baseline(tmp_path: Path, make_anthropic_server: Any) -> tuple[Path, Path, Any]:
    """A suite whose baseline passes every case, judged cases included; returns (suite folder, baseline.json, judge server)."""
    suite_root = write_suite(tmp_path / "suite", [case(i) for i in range(GATED_N)])
    server = make_anthropic_server(judge_responder)
    base = run(suite_root, tmp_path, lambda n: "yes", server=server, name="base")
    done = accept(base)
    assert done.baseline.score.passes == GATED_N, done.baseline.score
    return suite_root, done.path, server


@pytest.fixture
def judged_run(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """A run of a copy of refund-policy-qa whose suite.toml sets min_kappa 0.6, judged by the simulated judge;
    returns (suite folder, run directory). The copy has no calibration record: its judge is uncalibrated."""
    server = make_anthropic_server(judge=SimulatedJudge())
    suite_dir = tmp_path / "rpq"
    shutil.copytree(ROOT / "goldens" / "refund-policy-qa", suite_dir)
    toml = (suite_dir / "suite.toml").read_text()
    (suite_dir / "suite.toml").write_text(toml.replace("[judge]", "[judge]\nmin_kappa = 0.6", 1))
    assert "min_kappa" in (suite_dir / "suite.toml").read_text()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local-test-key")
    suite = load_suite(suite_dir)
    options = RunOptions(cache_dir=tmp_path / "cache", out_root=tmp_path / "runs", judge="on", progress=False)
    outcome = Runner(suite, load_system("baseline", suite), options).run()
    return suite_dir, outcome.run_dir
