"""The run summary's cache hits count the same calls its savings do: the system's and the judge's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from evalkit._report import format_summary
from evalkit._results import read_run
from evalkit._runner import Runner, RunOptions
from evalkit._systems import load_system
from evalkit.suite import load_suite
from evalkit.testing.server import SimulatedJudge

ROOT = Path(__file__).resolve().parents[2]


def test_a_warm_rerun_hits_every_call_it_saved(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: Any
) -> None:
    server = make_anthropic_server(judge=SimulatedJudge())
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local-test-key")
    suite = load_suite(ROOT / "goldens" / "reply-drafter")
    system = load_system("baseline", suite)  # a Python system: its cases are no calls, its judge checks are

    def run() -> str:
        options = RunOptions(
            cache_dir=tmp_path / "cache", out_root=tmp_path / "runs", judge="on", progress=False
        )
        outcome = Runner(suite, system, options).run()
        manifest, rows = read_run(outcome.run_dir)
        return format_summary(manifest, rows)

    cold = run()
    _, rows = read_run(sorted((tmp_path / "runs").iterdir())[0])
    judge_calls = rows.filter(pl.col("judge_model").is_not_null()).height
    assert judge_calls > 0
    calls = judge_calls
    assert f"cache hits 0/{calls}" in cold
    warm = run()
    assert f"cache hits {calls}/{calls}" in warm
    assert "the cache saved $0.0000" in warm  # the simulated judge bills nothing, so it saved nothing
