"""A warm rerun answers each cached case in the calling thread and sends only what the cache lacks to the pool;
journal lines that cost nothing to redo are flushed in groups."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalkit._cache import MESSAGES_ENDPOINT, ResponseCache, cache_key
from evalkit._results import CaseResult, Journal, read_run
from evalkit._runner import Runner, RunOptions
from evalkit._systems import load_system
from evalkit.suite import load_suite
from evalkit.testing.server import last_user_text


def _answer(body: dict[str, Any]) -> str:
    n = int(last_user_text(body).split()[-1])
    return "even" if n % 2 == 0 else "odd"


def _suite(root: Path, n: int) -> Path:
    import json

    root.mkdir(parents=True)
    rows = [
        {
            "id": f"w{i:03d}",
            "input": f"number {i}",
            "checks": [{"kind": "exact", "expected": ["even", "odd"][i % 2]}],
        }
        for i in range(n)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "suite.toml").write_text(
        'name = "warm"\n\n[model]\nname = "claude-haiku-4-5"\n', encoding="utf-8"
    )
    (root / "prompt.md").write_text("Even or odd?\n", encoding="utf-8")
    return root


def test_a_warm_rerun_answers_cached_cases_inline_and_calls_only_the_missing_one(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 40
    server = make_anthropic_server(responder=_answer)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    suite = load_suite(_suite(tmp_path / "suite", n))
    cache_dir = tmp_path / "cache"

    def run(name: str, system: Any) -> Any:
        opts = RunOptions(
            concurrency=8, cache_dir=cache_dir, run_dir=tmp_path / name, progress=False, judge="off"
        )
        return Runner(suite, system, opts).run()

    run("cold", load_system("claude", suite))
    assert len(server.requests_to(MESSAGES_ENDPOINT)) == n
    # case 1 is not among the cases the runner samples to tell a warm rerun (every third, and the last)
    system = load_system("claude", suite)
    missing = suite.cases[1]
    ResponseCache(cache_dir).path_for(
        cache_key(MESSAGES_ENDPOINT, system.build_request(missing.input))
    ).unlink()

    built: list[tuple[str, str]] = []
    build = system.build_request

    def recording(input: Any) -> dict[str, Any]:
        built.append((str(input), threading.current_thread().name))
        return build(input)

    monkeypatch.setattr(system, "build_request", recording)
    outcome = run("warm", system)

    assert len(server.requests_to(MESSAGES_ENDPOINT)) == n + 1  # only the missing answer was asked for
    _, rows = read_run(outcome.run_dir)
    assert rows.get_column("case_id").n_unique() == n
    assert set(rows.filter(~rows["cache_hit"]).get_column("case_id")) == {missing.id}
    assert rows.get_column("status").unique().to_list() == ["pass"]
    where: dict[str, list[str]] = {}
    for text, thread in built:
        where.setdefault(text, []).append(thread)
    main = threading.main_thread().name
    # the runner's sample builds a dozen requests too, in the calling thread
    assert all(set(threads) == {main} for text, threads in where.items() if text != missing.input)
    assert len(where) == n and where[missing.input][0] == main  # looked up inline first,
    assert [t for t in where[missing.input] if t != main] == ["evalkit_0"]  # then sent from the pool, once


def _result(i: int, *, hit: bool) -> CaseResult:
    return CaseResult(
        run_id="r",
        suite="s",
        suite_version="v",
        slice="all",
        case_id=f"c{i}",
        repeat=0,
        system="claude",
        status="pass",
        output="x",
        cache_hit=hit,
    )


def test_a_line_that_is_free_to_redo_waits_for_the_next_flush_and_a_paid_line_flushes_at_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "results.jsonl"
    journal = Journal(path)
    on_disk: Callable[[], int] = lambda: path.read_bytes().count(b"\n")  # noqa: E731
    journal.append(_result(0, hit=True))
    journal.append(_result(1, hit=True))
    assert on_disk() == 0  # answered from the cache: a resume would answer them again, for nothing
    journal.append(_result(2, hit=False))
    assert on_disk() == 3  # a paid answer is on disk before the next case is recorded, with those before it
    journal.append(_result(3, hit=True))
    journal.close()
    assert on_disk() == 4
