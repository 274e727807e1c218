"""Model calls from worker processes: same results as in-process, errors come back, nothing is left running."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from evalkit.client import CallError
from evalkit.results import load_run
from evalkit.runner import Runner, RunOptions
from evalkit.suite import load_suite
from evalkit.systems import load_system
from evalkit.workers import CallWorkers


def ask(text: str) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-6", "max_tokens": 16, "messages": [{"role": "user", "content": text}]}


def test_workers_answer_like_a_client_and_shut_down(make_anthropic_server: Any) -> None:
    server = make_anthropic_server(lambda body: "echo " + body["messages"][-1]["content"])
    with CallWorkers(2, 3, base_url=server.base_url, api_key="k", max_retries=0) as workers:
        results = [workers.create(ask(f"q{i}")) for i in range(6)]
        assert [r.text for r in results] == [f"echo q{i}" for i in range(6)]
        assert all(r.cost_usd is not None and r.latency_s > 0 for r in results)
        assert workers.count_tokens(ask("hello")) > 0  # other methods run in this process
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("evalkit-calls")]
    with pytest.raises(RuntimeError, match="closed"):
        workers.create(ask("late"))


def test_errors_come_back_as_call_errors(make_anthropic_server: Any) -> None:
    server = make_anthropic_server(faults={0: "server_error", 1: "server_error"})
    with CallWorkers(1, 1, base_url=server.base_url, api_key="k", max_retries=0) as workers:
        with pytest.raises(CallError) as info:
            workers.create(ask("x"))
        assert info.value.kind == "server"


def test_a_run_with_worker_processes_matches_one_without(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_anthropic_server(lambda body: "billing")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    suite = load_suite(Path(__file__).resolve().parents[1] / "goldens" / "support-triage")
    frames = []
    for processes in (1, 2):
        opts = RunOptions(
            concurrency=8,
            processes=processes,
            progress=False,
            judge="off",
            cache_dir=tmp_path / f"cache{processes}",
            out_root=tmp_path / f"runs{processes}",
        )
        runner = Runner(suite, load_system("claude", suite), opts)
        assert runner.processes() == processes
        outcome = runner.run()
        frames.append(
            load_run(outcome.run_dir)[1].sort("case_id").select("case_id", "status", "output", "cost_usd")
        )
    assert frames[0].equals(frames[1])
    assert len(server.requests_to("/v1/messages")) == 2 * len(suite.cases)
