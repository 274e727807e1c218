"""Cases run in worker processes: the same results as in one process, nothing left running, killed runs resume."""

from __future__ import annotations

import multiprocessing
import re
from pathlib import Path
from typing import Any

import pytest

from evalkit._client import Client
from evalkit._results import read_run
from evalkit._runner import Runner, RunOptions
from evalkit._systems import load_system
from evalkit.suite import load_suite

GOLDENS = Path(__file__).resolve().parents[2] / "goldens"


@pytest.fixture
def billing_server(make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A local server answering "billing" to everything, set as the environment's API endpoint."""
    server = make_anthropic_server(lambda body: "billing")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    return server


def options(tmp_path: Path, name: str, **kw: Any) -> RunOptions:
    return RunOptions(
        progress=False, cache_dir=tmp_path / f"cache-{name}", out_root=tmp_path / f"runs-{name}", **kw
    )


def test_a_run_in_worker_processes_matches_one_without(tmp_path: Path, billing_server: Any) -> None:
    server = billing_server  # its request log is checked below
    suite = load_suite(GOLDENS / "support-triage")
    frames = []
    for processes in (1, 2):
        runner = Runner(
            suite,
            load_system("claude", suite),
            # prompt caching off: which calls write the prefix and which read it depends on timing, and so cost
            options(
                tmp_path, str(processes), concurrency=8, processes=processes, judge="off", prompt_cache="off"
            ),
        )
        assert runner.context.processes() == processes
        outcome = runner.run()
        assert outcome.totals.done == len(suite.cases)
        frames.append(
            read_run(outcome.run_dir)[1].sort("case_id").select("case_id", "status", "output", "cost_usd")
        )
    assert frames[0].equals(frames[1])
    import gc

    assert gc.get_freeze_count() == 0  # frozen only for the fork: this process collects its garbage as before
    assert len(server.requests_to("/v1/messages")) == 2 * len(suite.cases)
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("evalkit-cases")]
    # the workers wrote the cache: a rerun with two processes makes no request
    server.clear_log()
    again = Runner(
        suite, load_system("claude", suite), options(tmp_path, "2", concurrency=8, processes=2, judge="off")
    )
    again.options.run_dir = tmp_path / "rerun"
    outcome = again.run()
    assert server.requests_to("/v1/messages") == []
    assert outcome.totals.cache_hits == len(suite.cases)


def test_each_thread_count_adds_up_to_the_concurrency() -> None:
    from evalkit._runner import split_threads

    assert split_threads(50, 3) == [17, 17, 16]
    assert split_threads(8, 2) == [4, 4]
    assert split_threads(3, 5) == [1, 1, 1]  # never an idle process
    with pytest.raises(ValueError):
        split_threads(0, 2)


def test_cases_are_shared_out_in_proportion_and_the_last_held_back() -> None:
    from evalkit._runner import split_cases

    items = list(range(1000))
    shares, held = split_cases(items, [17, 17, 16], shared=0.1)
    assert [len(s) for s in shares] == [308, 307, 290]  # 905 given out as 17 : 17 : 16
    assert held == items[905:]  # a tenth of the 950 past the first wave, from the end
    assert sorted(x for s in shares for x in s) + held == items  # each case once
    # at least one case per thread is held back, so every thread can help finish
    shares, held = split_cases(list(range(60)), [4, 4], shared=0.1)
    assert len(held) == 8 and [len(s) for s in shares] == [26, 26]
    # fewer cases than threads: nothing held back, nothing lost
    shares, held = split_cases(list(range(5)), [4, 4])
    assert held == [] and sorted(shares[0] + shares[1]) == list(range(5))


def test_a_cache_entry_that_cannot_be_written_leaves_an_error_that_resume_completes(
    tmp_path: Path, billing_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers write cache entries off the calling thread, but a result is journalled only after its entry."""
    from evalkit._cache import ResponseCache

    server = billing_server
    suite = load_suite(GOLDENS / "support-triage")
    real_put = ResponseCache.put
    refused = {case.id for case in suite.cases[::10]}

    def put(self: ResponseCache, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("meta", {}).get("case_id") in refused:
            raise OSError(28, "No space left on device")
        real_put(self, *args, **kwargs)

    monkeypatch.setattr(ResponseCache, "put", put)  # before the fork: the workers inherit it
    runner = Runner(
        suite,
        load_system("claude", suite),
        options(tmp_path, "full", concurrency=8, processes=2, judge="off"),
    )
    outcome = runner.run()
    _, rows = read_run(outcome.run_dir)
    errors = rows.filter(rows["case_status"] == "error")
    assert set(errors["case_id"].to_list()) == refused
    assert all("No space left" in e for e in errors["case_error"].to_list())
    assert errors["cost_usd"].null_count() == 0  # the call was paid for, and says so
    assert outcome.totals.errors == len(refused)
    monkeypatch.setattr(ResponseCache, "put", real_put)
    server.clear_log()
    resumed = Runner(
        suite,
        load_system("claude", suite),
        options(tmp_path, "full", concurrency=8, processes=2, judge="off"),
    ).run(resume=outcome.run_dir)
    assert resumed.totals.done == len(refused) and resumed.totals.errors == 0
    assert len(server.requests_to("/v1/messages")) == len(refused)
    _, rows = read_run(outcome.run_dir)
    assert rows.filter(rows["case_status"] == "error").height == 0
    assert rows["case_id"].n_unique() == len(suite.cases)


@pytest.mark.usefixtures("billing_server")
def test_workers_exit_on_their_stop_signals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker exits by itself once the cases are done; none is left for the parent to terminate.

    A worker that exited while reading the shared queue held its lock for good, and the others' threads never
    got their stop signals: the run then waited out the join timeout (5 s) and terminated them.
    """
    import time

    from evalkit._runner import _workers as workers

    exits: list[tuple[list[int | None], float]] = []
    real_join = workers.CaseWorkers.join

    def join(self: Any, timeout: float = 5.0) -> None:
        started = time.monotonic()
        real_join(self, timeout)
        exits.append(([p.exitcode for p in self._procs], time.monotonic() - started))

    monkeypatch.setattr(workers.CaseWorkers, "join", join)
    suite = load_suite(GOLDENS / "support-triage")
    for attempt in range(4):
        opts = options(tmp_path, str(attempt), concurrency=9, processes=3, judge="off")
        assert Runner(suite, load_system("claude", suite), opts).run().totals.done == len(suite.cases)
    assert [codes for codes, _ in exits] == [[0, 0, 0]] * 4
    assert max(seconds for _, seconds in exits) < 2.0


def test_judge_checks_run_in_the_workers_too(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def responder(body: dict[str, Any]) -> Any:
        if "strict, fair evaluator" in str(body.get("system")):
            rubric = body["messages"][-1]["content"].split("<rubric>")[1].split("</rubric>")[0]
            n = len(re.findall(r"^\d+\. ", rubric, re.MULTILINE))
            return {
                "criteria": [{"criterion": "", "met": True, "evidence": ""}] * n,
                "score": 5,
                "passed": True,
                "reasoning": "ok",
            }
        return {"label": "shipping", "draft": "Your order A-10442 is on its way."}

    server = make_anthropic_server(responder)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    suite = load_suite(GOLDENS / "reply-drafter")
    runner = Runner(
        suite, load_system("claude", suite), options(tmp_path, "j", concurrency=4, processes=2, judge="on")
    )
    outcome = runner.run()
    _, rows = read_run(outcome.run_dir)
    judged = rows.filter(rows["check_kind"] == "judge")
    assert judged.height == len(suite.cases)
    assert set(judged["status"].to_list()) <= {"pass", "skipped"}, judged["error"].drop_nulls().to_list()[:2]
    assert "pass" in judged["status"].to_list()


def test_a_callers_own_client_keeps_the_run_in_one_process(tmp_path: Path, anthropic_server: Any) -> None:
    suite = load_suite(GOLDENS / "support-triage")
    client = Client(base_url=anthropic_server.base_url, api_key="k")
    runner = Runner(
        suite,
        load_system("claude", suite),
        options(tmp_path, "own", concurrency=64, processes=4),
        client=client,
    )
    assert runner.context.processes() == 1


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").exists(), reason="reads process state from /proc")
def test_workers_stop_when_the_run_is_killed_and_the_run_resumes(
    tmp_path: Path, make_anthropic_server: Any
) -> None:
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    server = make_anthropic_server(lambda body: "billing", latency=0.05)
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    run_dir = tmp_path / "run"
    args = [
        sys.executable,
        "-m",
        "evalkit.cli",
        "run",
        str(GOLDENS / "support-triage"),
        "--system",
        "claude",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--judge",
        "off",
        "-q",
    ]
    proc = subprocess.Popen(
        [*args, "--out", str(run_dir), "--concurrency", "8", "--processes", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    journal = run_dir / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not journal.exists() or journal.read_text().count("\n") < 40):
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert len(workers) >= 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_at_kill = {
        json.loads(line)["case_id"] for line in journal.read_text().splitlines() if line.endswith("}")
    }
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers), "worker processes outlived the killed run"
    subprocess.run(
        [*args, "--resume", str(run_dir)], env=env, check=True, stdout=subprocess.DEVNULL, timeout=120
    )
    _, rows = read_run(run_dir)
    suite = load_suite(GOLDENS / "support-triage")
    assert rows.height == len(suite.cases) and rows["case_id"].n_unique() == len(suite.cases)
    asked: dict[str, int] = {}
    by_text = {case.id: case.input["body"] for case in suite.cases}
    for record in server.requests_to("/v1/messages"):
        if record.body is None:
            # a request the kill cut off mid-body is never logged (the server drops the connection: see the
            # test below); only a body the server refused is logged without one, answered with an error
            assert record.status in (400, 408, 413), record
            continue
        text = record.body["messages"][-1]["content"]
        for case_id, body in by_text.items():
            if body and body in text:
                asked[case_id] = asked.get(case_id, 0) + 1
    assert all(asked.get(case_id, 0) <= 1 for case_id in done_at_kill if by_text[case_id])


def test_a_request_cut_off_mid_body_is_dropped_not_logged_or_answered(make_anthropic_server: Any) -> None:
    """What a killed worker leaves: headers and part of a body, then the end of the connection. The server must
    not log it as a request without a body (the kill test read such a record and failed with a TypeError)."""
    import socket

    server = make_anthropic_server(lambda body: "billing")
    body = b'{"model": "claude-haiku-4-5", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}'
    head = (
        "POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: k\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        conn.sendall(head + body[:20])
        conn.shutdown(socket.SHUT_WR)  # the client is gone: no more bytes will come
        # the wait condition: the server has ended the connection (a reply, or none)
        reply = b""
        try:
            while chunk := conn.recv(4096):
                reply += chunk
        except ConnectionResetError:
            pass
    assert reply == b"", reply[:80]
    assert server.requests_to("/v1/messages") == []
