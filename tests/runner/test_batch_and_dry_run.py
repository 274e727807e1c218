"""Message Batches runs and the dry-run estimate, against the local server through the real SDK."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalkit._client import Client
from evalkit._report import format_summary
from evalkit._results import read_run
from evalkit._runner import Runner, RunOptions, estimate_run
from evalkit._systems import PythonSystem, load_system
from evalkit.graders import Judge
from evalkit.suite import load_suite


def responder(body: dict[str, Any]) -> Any:
    """System calls answer 'fine answer N'; judge calls meet every rubric criterion."""
    user = body["messages"][-1]["content"]
    if "strict, fair evaluator" in str(body.get("system", "")):
        rubric = re.search(r"<rubric>\n(.*?)\n</rubric>", user, re.DOTALL)
        items = [re.sub(r"^\d+\. ", "", line) for line in rubric.group(1).splitlines()] if rubric else []
        return {
            "criteria": [{"criterion": c, "met": True, "evidence": "fine"} for c in items],
            "score": 5,
            "passed": True,
            "reasoning": "meets the rubric",
        }
    number = re.search(r"\d+", user)
    return f"fine answer {number.group(0) if number else '?'}"


def make_suite(tmp_path: Path, n: int = 12) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    rows = []
    for i in range(n):
        rows.append(
            {
                "id": f"q{i:02d}",
                "input": {"question": f"question {i}"},
                "slice": "a" if i % 2 else "b",
                "checks": [
                    # every third case fails its cheap check, so its judge call is never made
                    {"kind": "contains_all", "facts": ["fine" if i % 3 else "never said"]},
                    {"kind": "judge", "name": "quality", "rubric": ["Answers the question", "Is polite"]},
                ],
            }
        )
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "suite.toml").write_text('name = "qa"\n[model]\nname = "claude-sonnet-4-6"\nmax_tokens = 64\n')
    (root / "prompt.md").write_text("Answer the question briefly.")
    (root / "baseline.py").write_text(
        "def predict(input):\n    return 'fine answer ' + input['question'].split()[-1]\n"
    )
    return root


def runner_for(suite_root: Path, tmp_path: Path, server: Any, system: str = "claude", **kw: Any) -> Runner:
    suite = load_suite(suite_root)
    client = Client(base_url=server.base_url, api_key="test-key", max_retries=1, timeout=5)
    opts = RunOptions(
        out_root=tmp_path / "runs", cache_dir=tmp_path / "cache", progress=False, judge="on", **kw
    )
    judge = Judge(client=client, settings=suite.config.judge, cache=None)
    runner = Runner(suite, load_system(system, suite), opts, client=client, judge=judge)
    judge.cache = runner.cache
    return runner


def test_a_batch_run_with_repeats_judges_every_repeat_in_its_batch(
    tmp_path: Path, make_anthropic_server: Any
) -> None:
    """The baseline gives the same output every repeat; each repeat's verdict still comes from the judge's batch,
    none from a live call."""
    server = make_anthropic_server(responder, batch_delay=0.1)
    runner = runner_for(
        make_suite(tmp_path), tmp_path, server, "baseline", batch=True, batch_poll_s=0.05, repeats=2
    )
    outcome = runner.run()
    assert [r.path for r in server.requests].count("/v1/messages") == 0
    (create,) = [r for r in server.requests if r.path == "/v1/messages/batches" and r.method == "POST"]
    assert len(create.body["requests"]) == 8 * 2
    _, rows = read_run(outcome.run_dir)
    judged = rows.filter(pl.col("check_kind") == "judge")
    assert judged.filter(pl.col("status") == "pass").height == 8 * 2
    assert not judged["judge_cache_hit"].any()


def test_batch_run_sends_no_live_messages_and_resumes_its_batch(
    tmp_path: Path, make_anthropic_server: Any
) -> None:
    server = make_anthropic_server(responder, batch_delay=0.2)
    root = make_suite(tmp_path)
    runner = runner_for(root, tmp_path, server, batch=True, batch_poll_s=0.05)
    outcome = runner.run()
    paths = [r.path for r in server.requests]
    assert paths.count("/v1/messages") == 0
    creates = [r for r in server.requests if r.path == "/v1/messages/batches" and r.method == "POST"]
    assert len(creates) == 2  # one for the system, one for the judge
    assert len(creates[0].body["requests"]) == 12
    assert len(creates[1].body["requests"]) == 8  # 4 cases failed their cheap check first
    assert set(outcome.manifest.batch_ids) == {"system", "judge"}
    _, rows = read_run(outcome.run_dir)
    assert rows["case_id"].n_unique() == 12
    verdicts = rows.unique(["case_id"]).group_by("case_status").len()
    assert dict(verdicts.iter_rows()) == {"pass": 8, "fail": 4}
    judged = rows.filter((pl.col("check_kind") == "judge") & (pl.col("status") == "pass"))
    assert judged.height == 8 and judged["judge_cost_usd"].min() > 0
    # batch prices are half the standard price
    standard = Client(base_url=server.base_url, api_key="k").create(
        runner.system.build_request({"question": "question 1"})
    )  # type: ignore[union-attr]
    batch_cost = rows.filter(pl.col("case_id") == "q01")["cost_usd"][0]
    assert batch_cost == pytest.approx(standard.cost_usd / 2)

    # the batch's responses are read back from the cache, but this run paid for them: not cache hits, and spent
    assert not rows["cache_hit"].any() and not judged["judge_cache_hit"].any()
    cases = rows.unique(["case_id"])
    spent = float(cases["cost_usd"].sum()) + float(judged["judge_cost_usd"].sum())
    assert spent > 0 and outcome.totals.spent_usd == pytest.approx(spent) and outcome.totals.cache_hits == 0
    summary = format_summary(*read_run(outcome.run_dir))
    made = cases.height + judged.height  # the system's calls and the judge's
    assert f"spent ${spent:.4f}   cache hits 0/{made}" in summary and "the cache saved" not in summary
    # a later run reads the same entries as hits that cost it nothing
    calls = len(server.requests)
    later = runner_for(root, tmp_path, server).run()
    assert later.totals.cache_hits == 12 and later.totals.spent_usd == 0
    assert f"the cache saved ${spent:.4f}" in format_summary(*read_run(later.run_dir))
    assert len(server.requests) == calls, "the later run made no call"


def test_interrupted_batch_run_collects_the_same_batch(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_anthropic_server(responder, batch_delay=0.3)
    root = make_suite(tmp_path, n=6)
    runner = runner_for(root, tmp_path, server, batch=True, batch_poll_s=0.05)

    def interrupt(_: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("evalkit._runner._batch._sleep", interrupt)
    with pytest.raises(KeyboardInterrupt, match="--resume"):
        runner.run()
    run_dir = next((tmp_path / "runs").iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and "system" in manifest["batch_ids"]
    monkeypatch.undo()
    again = runner_for(root, tmp_path, server, batch=True, batch_poll_s=0.05).run(resume=run_dir)
    system_creates = [
        r
        for r in server.requests
        if r.path == "/v1/messages/batches"
        and r.method == "POST"
        and "Answer the question" in json.dumps(r.body)
    ]
    assert len(system_creates) == 1  # resumed, not resubmitted
    assert again.manifest.batch_ids["system"] == manifest["batch_ids"]["system"]
    assert [r.path for r in server.requests].count("/v1/messages") == 0
    _, rows = read_run(run_dir)
    assert rows["case_id"].n_unique() == 6


@pytest.mark.parametrize("repeats", [1, 2])
def test_dry_run_with_count_tokens_matches_what_the_run_sends(
    tmp_path: Path, make_anthropic_server: Any, repeats: int
) -> None:
    from evalkit.testing import count_input_tokens

    server = make_anthropic_server(responder)
    root = make_suite(tmp_path)
    suite = load_suite(root)
    client = Client(base_url=server.base_url, api_key="k", max_retries=0)
    for spec in ("claude", "baseline"):
        system = load_system(spec, suite)
        estimate = estimate_run(
            suite, system, repeats=repeats, judge=suite.config.judge, count_tokens=client.count_tokens
        )
        server.clear_log()
        runner_for(root, tmp_path / spec, server, system=spec, repeats=repeats).run()
        sent = {"system": 0, "judge": 0}
        calls = {"system": 0, "judge": 0}
        for r in server.requests_to("/v1/messages"):
            kind = "judge" if "strict, fair evaluator" in str(r.body.get("system")) else "system"
            sent[kind] += count_input_tokens(r.body)  # what the server bills as usage.input_tokens
            calls[kind] += 1
        lines = {line.kind: line for line in estimate.lines}
        if spec == "claude":
            assert lines["system"].input_tokens == sent["system"] and lines["system"].calls == calls["system"]
            assert lines["system"].exact
            assert not lines["judge"].exact  # outputs unknown before the run
            assert lines["judge"].calls >= calls["judge"]
        else:
            # a Python system is a line of its own: no calls, a known zero
            assert lines["system"].calls == 0 and lines["system"].cost_usd == 0.0 and calls["system"] == 0
            assert lines["judge"].exact
            assert (
                lines["judge"].input_tokens == sent["judge"]
                and lines["judge"].calls == calls["judge"] == 8 * repeats
            )
        assert "from count_tokens" in estimate.format()


def test_offline_dry_run_is_labelled_an_estimate(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path))
    text = estimate_run(suite, load_system("claude", suite), judge=suite.config.judge).format()
    assert "estimated offline" in text and "(estimate)" in text
    assert "$" in text


# ---- batches that do not answer, and resumed batch runs ---------------------------------------------------------


def batch_creates(server: Any) -> list[Any]:
    return [r for r in server.requests if r.path == "/v1/messages/batches" and r.method == "POST"]


def test_a_resume_sends_what_the_batch_did_not_answer_in_a_new_batch(
    tmp_path: Path, make_anthropic_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = {"question 3"}

    def flaky(body: dict[str, Any]) -> Any:
        if any(f in str(body["messages"][-1]["content"]) for f in failing):
            raise RuntimeError("injected failure")
        return responder(body)

    server = make_anthropic_server(flaky, batch_delay=0.05)
    root = make_suite(tmp_path, n=6)
    first = runner_for(root, tmp_path, server, batch=True, batch_poll_s=0.02).run()
    assert "did not answer 1 of 6 requests" in capsys.readouterr().err  # said, not silent
    _, rows = read_run(first.run_dir)
    assert rows.filter(pl.col("case_status") == "error")["case_id"].unique().to_list() == ["q03"]

    failing.clear()
    server.clear_log()
    again = runner_for(root, tmp_path, server, batch=True, batch_poll_s=0.02).run(resume=first.run_dir)
    assert [r.path for r in server.requests].count("/v1/messages") == 0  # not sent live at the full price
    (create,) = batch_creates(server)
    (item,) = create.body["requests"]
    assert "question 3" in item["params"]["messages"][-1]["content"]
    _, rows = read_run(again.run_dir)
    assert rows.filter(pl.col("case_status") == "error").height == 0


def test_a_batch_the_api_no_longer_knows_is_sent_again_on_resume(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anthropic

    server = make_anthropic_server(responder, batch_delay=0.3)
    root = make_suite(tmp_path, n=4)

    def interrupt(_: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("evalkit._runner._batch._sleep", interrupt)
    with pytest.raises(KeyboardInterrupt):
        runner_for(root, tmp_path, server, batch=True, batch_poll_s=0.05).run()
    monkeypatch.undo()
    run_dir = next((tmp_path / "runs").iterdir())
    saved = json.loads((run_dir / "manifest.json").read_text())["batch_ids"]["system"]
    sdk = anthropic.Anthropic(base_url=server.base_url, api_key="test-key")
    sdk.messages.batches.cancel(saved)
    sdk.messages.batches.delete(saved)

    again = runner_for(root, tmp_path, server, batch=True, batch_poll_s=0.05).run(resume=run_dir)
    assert again.manifest.batch_ids["system"] != saved
    assert len(batch_creates(server)) == 3  # system, then (on resume) system again, then judge
    assert [r.path for r in server.requests].count("/v1/messages") == 0


def test_a_batch_api_failure_stops_the_run_with_the_fix(tmp_path: Path, make_anthropic_server: Any) -> None:
    from evalkit.errors import EvalkitError

    server = make_anthropic_server(responder, api_key="the-right-key")
    runner = runner_for(make_suite(tmp_path, n=4), tmp_path, server, batch=True, batch_poll_s=0.02)
    with pytest.raises(EvalkitError, match=r"authentication failed.*then: run the same command again"):
        runner.run()
    assert list((tmp_path / "runs").iterdir()) == []  # a refused key is bad input: nothing is left behind


def test_a_batch_that_fails_after_it_was_submitted_keeps_the_run_to_resume(
    tmp_path: Path, make_anthropic_server: Any
) -> None:
    from evalkit.errors import EvalkitError

    server = make_anthropic_server(responder, batch_delay=60)
    runner = runner_for(make_suite(tmp_path, n=4), tmp_path, server, batch=True, batch_poll_s=0.02)
    polls = [0]

    def stop_the_server(_: float) -> None:
        polls[0] += 1
        if polls[0] == 2:
            server.stop()

    import evalkit._runner._batch

    original = evalkit._runner._batch._sleep
    evalkit._runner._batch._sleep = stop_the_server
    try:
        with pytest.raises(EvalkitError, match=r"Message Batches API failed.*evalkit run --resume"):
            runner.run()
    finally:
        evalkit._runner._batch._sleep = original
    run_dir = next((tmp_path / "runs").iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["batch_ids"]["system"]


def test_a_judged_batch_run_runs_a_python_system_once_per_case(
    tmp_path: Path, make_anthropic_server: Any
) -> None:
    server = make_anthropic_server(responder, batch_delay=0.05)
    root = make_suite(tmp_path, n=6)
    calls: list[str] = []

    def predict(case_input: dict[str, Any]) -> str:
        calls.append(case_input["question"])
        return "fine answer " + case_input["question"].split()[-1]

    suite = load_suite(root)
    client = Client(base_url=server.base_url, api_key="test-key", max_retries=1, timeout=5)
    opts = RunOptions(
        out_root=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        progress=False,
        judge="on",
        batch=True,
        batch_poll_s=0.02,
        repeats=2,
    )
    judge = Judge(client=client, settings=suite.config.judge, cache=None)
    runner = Runner(suite, PythonSystem("pipeline", predict, "test"), opts, client=client, judge=judge)
    judge.cache = runner.cache
    outcome = runner.run()
    assert sorted(calls) == sorted(f"question {i}" for i in range(6) for _ in range(2))
    _, rows = read_run(outcome.run_dir)
    assert rows["latency_s"].drop_nulls().len() == rows.height


# ---- `evalkit run --resume` keeps the run's own settings -----------------------------------------------------------


@pytest.fixture
def cli(
    make_anthropic_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Callable[..., int]]:
    from evalkit.cli import main

    server = make_anthropic_server(responder, batch_delay=0.05)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> int:
        return main(["run", *args, "-q", "--max-retries", "0"])

    return server, run


def test_resume_refuses_options_that_would_change_the_run(
    tmp_path: Path, cli: tuple[Any, Callable[..., int]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, run = cli
    root = make_suite(tmp_path, n=3)
    assert run(str(root), "--system", "baseline", "--out", "r1", "--judge", "off") == 0
    capsys.readouterr()
    for extra, says in [
        (["--repeats", "3"], "1 repeat(s), not 3"),
        (["--system", "claude"], "system is baseline, not claude"),
        (["--judge", "on"], "not judged; --judge on would mix"),
        ([str(tmp_path / "elsewhere")], "the run is of the suite at"),
    ]:
        assert run("--resume", "r1", *extra) == 2, extra
        assert says in capsys.readouterr().err


def test_resume_keeps_the_runs_cache_judge_and_batch_modes(
    tmp_path: Path, cli: tuple[Any, Callable[..., int]]
) -> None:
    server, run = cli
    root = make_suite(tmp_path, n=6)
    # a replay run against an empty cache: every case is a replay miss, and nothing is sent (exit 1: nothing scored)
    (tmp_path / "cache").mkdir()
    assert run(str(root), "--system", "claude", "--out", "replayed", "--cache", "replay") == 1
    assert run("--resume", "replayed") == 1
    assert server.requests_to("/v1/messages") == [] and batch_creates(server) == []

    # a batch run whose judge was off: resumed, its cases left come from its batch (collected again, not sent
    # live or in a new batch), and are not judged
    (root / "prompt.md").write_text("Answer the question briefly.")
    assert run(str(root), "--system", "claude", "--out", "batched", "--batch", "--judge", "off") == 0
    journal = tmp_path / "batched" / "results.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:2]))  # as if it stopped there
    shutil.rmtree(tmp_path / "cache")  # and the cache had not kept the answers
    server.clear_log()
    assert run("--resume", "batched") == 0
    assert server.requests_to("/v1/messages") == [] and batch_creates(server) == []
    _, rows = read_run(tmp_path / "batched")
    assert rows["case_id"].n_unique() == 6 and rows.filter(pl.col("case_status") == "error").height == 0
    # judged by no one: not_judged where the cheap check passed, skipped where it failed
    judged = rows.filter(pl.col("check_kind") == "judge")
    assert sorted(judged["status"].unique().to_list()) == ["not_judged", "skipped"]
    assert (
        judged.filter(pl.col("status") == "not_judged")["skipped_reason"].str.starts_with("not judged").all()
    )


def test_resume_refuses_a_changed_prompt(
    tmp_path: Path, cli: tuple[Any, Callable[..., int]], capsys: Any
) -> None:
    _, run = cli
    root = make_suite(tmp_path, n=3)
    assert run(str(root), "--system", "claude", "--out", "r1") == 0
    (root / "prompt.md").write_text("Answer the question at length.")
    assert run("--resume", "r1") == 2
    assert "the prompt_hash has changed" in capsys.readouterr().err


def test_a_replay_without_a_cache_to_read_stops_before_running(
    tmp_path: Path, cli: tuple[Any, Callable[..., int]], capsys: pytest.CaptureFixture[str]
) -> None:
    server, run = cli
    root = make_suite(tmp_path, n=3)
    code = run(str(root), "--system", "claude", "--cache", "replay", "--cache-dir", str(tmp_path / "typo"))
    assert code == 2 and "no cache at" in capsys.readouterr().err
    assert server.requests == [] and not (tmp_path / "runs").exists()


def test_a_failed_api_call_outside_a_run_is_a_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dry run's token count calls the API; a key that cannot be sent fails it with exit 2 and no key shown."""
    from evalkit.cli import main

    key = "sk-ant-a-key-read-from-a-file"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key + "\n")
    code = main(["run", str(make_suite(tmp_path, n=2)), "--system", "claude", "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2 and "an API call failed (auth: " in err and "whitespace" in err
    assert key not in err and "Traceback" not in err


def two_judge_suite(tmp_path: Path, n: int = 4) -> Path:
    root = tmp_path / "two"
    root.mkdir()
    rubric = {"kind": "judge", "rubric": ["Answers the question"]}
    rows = [
        {
            "id": f"t{i}",
            "input": {"question": f"question {i}"},
            "checks": [rubric, {"kind": "judge", "name": "second", "rubric": ["Is polite"]}],
        }
        for i in range(n)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "suite.toml").write_text('name = "two"\n')
    (root / "baseline.py").write_text(
        "import sys\n"
        "def predict(input):\n"
        "    if input['question'] == 'question 3':\n"
        "        sys.exit(3)\n"
        "    return ('fine answer', input['question'])\n"
    )
    return root


def test_every_judge_check_of_a_case_goes_in_the_judges_batch(
    tmp_path: Path, make_anthropic_server: Any
) -> None:
    """Two judge checks per case, and a system that returns a tuple and, once, calls sys.exit: every verdict
    comes from the batch, the exit is that case's error, and the run completes."""
    server = make_anthropic_server(responder, batch_delay=0.05)
    runner = runner_for(
        two_judge_suite(tmp_path), tmp_path, server, "baseline", batch=True, batch_poll_s=0.02
    )
    outcome = runner.run()
    assert outcome.manifest.status == "complete"
    assert [r.path for r in server.requests].count("/v1/messages") == 0
    (create,) = batch_creates(server)
    assert len(create.body["requests"]) == 3 * 2
    _, rows = read_run(outcome.run_dir)
    errors = rows.filter(pl.col("case_status") == "error")
    assert errors["case_id"].unique().to_list() == ["t3"] and errors["case_error"][0].startswith("SystemExit")
    assert rows.filter(pl.col("status") == "pass").height == 3 * 2


def test_resuming_a_judged_run_without_a_judge_is_refused(tmp_path: Path, make_anthropic_server: Any) -> None:
    from evalkit.errors import EvalkitError

    server = make_anthropic_server(responder)
    root = make_suite(tmp_path, n=3)
    first = runner_for(root, tmp_path, server, "baseline").run()
    suite = load_suite(root)
    opts = RunOptions(out_root=tmp_path / "runs", cache_dir=tmp_path / "cache", progress=False, judge="off")
    with pytest.raises(EvalkitError, match="the run was judged, but no judge is available now"):
        Runner(suite, load_system("baseline", suite), opts).run(resume=first.run_dir)


def test_a_batch_run_resumes_with_cache_replay(tmp_path: Path, cli: tuple[Any, Callable[..., int]]) -> None:
    server, run = cli
    root = make_suite(tmp_path, n=4)
    assert run(str(root), "--system", "claude", "--out", "b", "--batch", "--judge", "off") == 0
    server.clear_log()
    assert run("--resume", "b", "--cache", "replay") == 0
    assert server.requests == []
