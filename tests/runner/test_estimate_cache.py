"""The dry run counts what the response cache already holds as free, and says a Python system costs nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit._cache import ResponseCache
from evalkit._runner import Runner, RunOptions, estimate_run
from evalkit._systems import load_system
from evalkit.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
TRIAGE = ROOT / "goldens" / "support-triage"


def test_a_python_system_is_a_line_that_costs_nothing() -> None:
    suite = load_suite(TRIAGE)
    text = estimate_run(suite, load_system("baseline", suite)).format()
    assert "a Python function, no API calls" in text and "at most $0.0000" in text


def test_cached_calls_are_free_in_the_estimate(
    tmp_path: Path, anthropic_server: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local-test-key")
    suite = load_suite(TRIAGE)
    system = load_system("claude", suite)
    cache = ResponseCache(tmp_path / "cache")
    before = estimate_run(suite, system, cache=cache)
    assert before.lines[0].calls == len(suite.cases) and before.lines[0].cached == 0
    # half the cases run once: their responses are cached
    half = suite.cases[: len(suite.cases) // 2]
    suite.cases[:] = half
    Runner(
        suite, system, RunOptions(cache_dir=tmp_path / "cache", out_root=tmp_path / "runs", progress=False)
    ).run()
    suite = load_suite(TRIAGE)
    after = estimate_run(suite, system, repeats=2, cache=ResponseCache(tmp_path / "cache"))
    line = after.lines[0]
    assert line.cached == len(half)  # repeat 0 of each case that ran; repeat 1 was never asked
    assert line.calls == 2 * len(suite.cases) - len(half)
    assert f"{len(half)} more calls are in the response cache already: free" in after.format()
