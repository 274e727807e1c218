"""Message Batches runs and the dry-run estimate, against the local server through the real SDK."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalkit.client import Client
from evalkit.estimate import estimate_run
from evalkit.judge import Judge
from evalkit.results import load_run
from evalkit.runner import Runner, RunOptions
from evalkit.suite import load_suite
from evalkit.summary import format_summary
from evalkit.systems import load_system


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
    _, rows = load_run(outcome.run_dir)
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
    _, rows = load_run(outcome.run_dir)
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
    summary = format_summary(*load_run(outcome.run_dir))
    assert f"spent ${spent:.4f}   cache hits 0/12" in summary and "the cache saved" not in summary
    # a later run reads the same entries as hits that cost it nothing
    calls = len(server.requests)
    later = runner_for(root, tmp_path, server).run()
    assert later.totals.cache_hits == 12 and later.totals.spent_usd == 0
    assert f"the cache saved ${spent:.4f}" in format_summary(*load_run(later.run_dir))
    assert len(server.requests) == calls, "the later run made no call"


def test_interrupted_batch_run_collects_the_same_batch(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_anthropic_server(responder, batch_delay=0.3)
    root = make_suite(tmp_path, n=6)
    runner = runner_for(root, tmp_path, server, batch=True, batch_poll_s=0.05)

    def interrupt(_: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("evalkit.batch._sleep", interrupt)
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
    _, rows = load_run(run_dir)
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
            assert "system" not in lines
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
