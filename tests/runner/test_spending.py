"""What a run spends: prompt caching of the stable prefix, the --max-cost cap, and the API's spend-limit refusal.

Against the local server, which keeps the API's prompt-cache accounting, through the real SDK."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalkit import api
from evalkit._cache import MESSAGES_ENDPOINT, cache_key
from evalkit._client import mark_prompt_cache
from evalkit._results import RunDir
from evalkit._systems import load_system
from evalkit.cli import main
from evalkit.errors import EvalkitError, SpendingStopped
from evalkit.suite import load_suite
from evalkit.testing.server import LocalAnthropicServer, last_user_text

# a prompt of about 2,000 tokens before short cases, as a triage prompt is
PROMPT = "Answer even or odd for the number in the message. Think of parity rules carefully. " * 95


def _answer(body: dict[str, Any]) -> str:
    n = int(last_user_text(body).split()[-1])
    return "even" if n % 2 == 0 else "odd"


def _suite(root: Path, n: int, model: str = "claude-sonnet-4-6") -> Path:
    root.mkdir(parents=True)
    rows = [
        {
            "id": f"s{i:03d}",
            "input": f"number {i}",
            "checks": [{"kind": "exact", "expected": ["even", "odd"][i % 2]}],
        }
        for i in range(n)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "suite.toml").write_text(f'name = "spend"\n\n[model]\nname = "{model}"\nmax_tokens = 16\n')
    (root / "prompt.md").write_text(PROMPT, encoding="utf-8")
    return root


@pytest.fixture
def server(make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch) -> LocalAnthropicServer:
    found: LocalAnthropicServer = make_anthropic_server(responder=_answer)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", found.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    return found


def _frame(run: Any) -> pl.DataFrame:
    """The journal's case rows (the token split is kept there, not in results.parquet)."""
    manifest = json.loads(Path(run.path, "manifest.json").read_text())
    rows = [r.model_dump(exclude={"checks"}) for r in RunDir(Path(run.path)).read_journal(manifest["run_id"])]
    return pl.DataFrame(rows).sort("case_id")


def _input_cost(frame: pl.DataFrame) -> float:
    """Input dollars at Sonnet's list prices: uncached 3.00, written 3.75, read 0.30 per million."""
    t = frame.select(
        pl.col("input_tokens").sum(), pl.col("cache_write_tokens").sum(), pl.col("cache_read_tokens").sum()
    ).row(0)
    return (t[0] * 3.0 + t[1] * 3.75 + t[2] * 0.30) / 1e6


def test_prompt_caching_cuts_the_input_cost_and_leaves_answers_and_cache_keys_alone(
    tmp_path: Path, server: LocalAnthropicServer
) -> None:
    suite = _suite(tmp_path / "s", 40)
    runs = {
        mode: api.run(
            suite, "claude", cache="off", judge="off", out=tmp_path / mode, progress=False, prompt_cache=mode
        )
        for mode in ("off", "on")
    }
    off, on = _frame(runs["off"]), _frame(runs["on"])
    assert off["output"].to_list() == on["output"].to_list()
    assert off["cache_read_tokens"].sum() == 0 and on["cache_read_tokens"].sum() > 0
    ratio = _input_cost(on) / _input_cost(off)
    assert ratio < 0.3, ratio  # about 0.1x for the prefix, after the first call or wave writes it
    sent = [r.body for r in server.requests if r.path == "/v1/messages"]
    marked = [b for b in sent if isinstance(b["system"], list)]
    assert len(marked) == 40 and marked[0]["system"][0]["cache_control"] == {"type": "ephemeral"}
    # the response cache keys the request as the system builds it, without the marker
    loaded = load_suite(suite)
    request = load_system("claude", loaded).build_request(loaded.cases[0].input)  # type: ignore[union-attr]
    assert cache_key(MESSAGES_ENDPOINT, request) == cache_key(MESSAGES_ENDPOINT, request)
    assert mark_prompt_cache(request) != request and "cache_control" not in json.dumps(request)
    assert json.loads(Path(runs["on"].path, "manifest.json").read_text())["prompt_cache"] == "on"
    # the summary and the report split the input into read, written and uncached, and say what was saved
    line = runs["on"].summary().splitlines()[-1]
    read, written = int(on["cache_read_tokens"].sum()), int(on["cache_write_tokens"].sum())
    assert (
        line.startswith("  prompt cache (40 system calls)") and f"{read:,} read + {written:,} written" in line
    )
    assert "prompt cache" not in runs["off"].summary()
    html = runs["on"].report(compare=False).html
    assert "read from the prompt cache" in html and f"{read:,}" in html


def test_a_short_prefix_or_a_model_with_a_higher_minimum_is_not_marked(
    tmp_path: Path, server: LocalAnthropicServer
) -> None:
    # about 2,000 tokens: below the 4,096 Opus 4.6 caches
    api.run(
        _suite(tmp_path / "s", 3, model="claude-opus-4-6"),
        "claude",
        judge="off",
        out=tmp_path / "r",
        progress=False,
    )
    assert all(isinstance(r.body["system"], str) for r in server.requests if r.path == "/v1/messages")


def _paid(server: LocalAnthropicServer) -> Counter[str]:
    return Counter(last_user_text(r.body) for r in server.requests if r.path == "/v1/messages")


@pytest.mark.parametrize("processes", ["1", "2"])
def test_max_cost_stops_within_a_wave_and_a_resume_with_a_higher_cap_finishes_paying_nothing_twice(
    tmp_path: Path, server: LocalAnthropicServer, capsys: pytest.CaptureFixture[str], processes: str
) -> None:
    suite = _suite(tmp_path / "s", 60)
    out = tmp_path / "run"
    cap = 0.05  # a case costs about $0.001 ($0.007 for the one that writes the prefix); its worst case, $0.03
    code = main(
        [
            "run",
            str(suite),
            "--system",
            "claude",
            "--out",
            str(out),
            "--max-cost",
            str(cap),
            "-q",
            "--concurrency",
            "4",
            "--processes",
            processes,  # worker processes keep to one cap too
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 3, err
    assert "stopped at its spending cap" in err and f"evalkit run --resume {out} --max-cost" in err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and "spending cap" in manifest["stopped_reason"]
    journal = RunDir(out).read_journal(manifest["run_id"])
    spent = sum(r.cost_usd or 0.0 for r in journal if r.status != "error")
    paid_before = _paid(server)
    assert spent <= cap  # never past the cap ...
    worst = float(err.split("its worst case $")[1].split(",")[0])
    assert spent >= cap - worst, (
        spent,
        cap,
        worst,
    )  # ... and stopped with less than one call's worst case left
    assert 0 < len(paid_before) < 60
    # resumed with a higher cap: the rest is run, nothing answered before is sent again
    higher = err.split("--max-cost ")[-1].split()[0]
    assert main(["run", "--resume", str(out), "--max-cost", higher, "-q"]) == 0, capsys.readouterr().err
    paid = _paid(server)
    assert len(paid) == 60 and max(paid.values()) == 1  # every case paid for exactly once
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"


def test_a_cap_on_a_model_without_a_price_is_refused_before_anything_is_sent(
    tmp_path: Path, server: LocalAnthropicServer
) -> None:
    suite = _suite(tmp_path / "s", 3, model="claude-unpriced-9")
    with pytest.raises(EvalkitError, match="claude-unpriced-9 has none"):
        api.run(suite, "claude", judge="off", out=tmp_path / "r", progress=False, max_cost=1.0)
    assert not [r for r in server.requests if r.path == "/v1/messages"]


def test_a_batch_past_the_cap_is_not_submitted(tmp_path: Path, server: LocalAnthropicServer) -> None:
    suite = _suite(tmp_path / "s", 30)
    with pytest.raises(SpendingStopped, match="spending cap"):
        api.run(suite, "claude", judge="off", out=tmp_path / "r", progress=False, batch=True, max_cost=0.01)
    assert not [
        r for r in server.requests if r.path.startswith("/v1/messages/batches") and r.method == "POST"
    ]


def test_the_dry_run_sets_the_estimate_against_the_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path / "s", 10)
    assert main(["run", str(suite), "--system", "claude", "--dry-run", "--max-cost", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "--max-cost $0.01: the estimate is" in out and "x the cap" in out
    assert main(["run", str(suite), "--system", "claude", "--dry-run", "--max-cost", "100"]) == 0
    assert "fits under it" in capsys.readouterr().out


def test_the_accounts_spend_limit_stops_the_run_without_retrying_into_errors(
    tmp_path: Path,
    make_anthropic_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = make_anthropic_server(responder=_answer, faults={i: "spend_limit" for i in range(3, 1000)})
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    suite = _suite(tmp_path / "s", 40)
    out = tmp_path / "run"
    code = main(["run", str(suite), "--system", "claude", "--out", str(out), "-q", "--concurrency", "2"])
    err = capsys.readouterr().err
    assert code == 3 and "spend limit is reached" in err and f"evalkit run --resume {out}" in err
    # each refused call was sent once (no retries), and the run stopped rather than refusing all 40
    refused = [r for r in server.requests if r.path == "/v1/messages"][3:]
    assert 1 <= len(refused) <= 4
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
