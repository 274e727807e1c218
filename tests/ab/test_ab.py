"""`Run.ab` and `evalkit ab` against the local server's simulated judge, with a planted position bias.

Two systems answer a refund question: one states the 30-day window (the rubric's criterion), one does not. The
simulated judge prefers the output sharing the criterion's words, but answers "the one shown first" with
probability 0.3 whatever the outputs say. Judged in one order that bias would credit the worse system; in both
orders it only turns some of the better system's wins into ties.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape as html_escape
from pathlib import Path

import polars as pl
import pytest

import evalkit as ek
from evalkit.cli import main
from evalkit.testing import LocalAnthropicServer
from evalkit.testing.server import SimulatedJudge

GOOD = 'def predict(input):\n    return "The refund window is 30 days from delivery."\n'
POOR = 'def predict(input):\n    return "Please write to us again and we will help."\n'
MID = 'def predict(input):\n    return "Your window is 30 days."\n'
N, BY_CODE = 24, 4


def _cases() -> list[dict]:
    rows = []
    for i in range(N):
        checks: list[dict] = [
            {"kind": "judge", "name": "answer", "rubric": ["States the refund window of 30 days"]}
        ]
        if i < BY_CODE:  # a code check the poor answer fails: decided without a judge call
            checks.insert(0, {"kind": "contains_none", "name": "no-deflection", "phrases": ["write to us"]})
        rows.append(
            {"id": f"q{i:03d}", "input": f"Order {i}: how long is the refund window?", "checks": checks,
             "slice": "direct" if i % 2 else "chat"}
        )  # fmt: skip
    return rows


@pytest.fixture
def runs(
    make_suite: Callable[..., Path],
    make_anthropic_server: Callable[..., LocalAnthropicServer],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> tuple[ek.Run, ek.Run, LocalAnthropicServer]:
    suite = make_suite(_cases(), name="refund-ab", files={"good.py": GOOD, "poor.py": POOR, "mid.py": MID})
    made = [
        ek.run(suite, f"{suite}/{name}.py:predict", judge="off", runs_dir=tmp_path / "runs",
               cache_dir=tmp_path / "cache", progress=False)
        for name in ("poor", "good")
    ]  # fmt: skip
    server = make_anthropic_server(judge=SimulatedJudge(seed=3, position_bias=0.3), simulated=True)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local-test")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    return made[0], made[1], server


def test_the_better_system_wins_both_ways_round_despite_a_position_bias(
    runs: tuple[ek.Run, ek.Run, LocalAnthropicServer], tmp_path: Path
) -> None:
    poor, good, server = runs
    forward = poor.ab(good, cache_dir=tmp_path / "cache").to_json()
    assert forward["n"] == N and forward["missing"] == 0
    assert forward["wins_a"] == 0 and forward["wins_b"] > N / 2
    assert forward["win_rate_b"] == 1.0 and forward["win_rate_b_ci"][0] > 0.5 and forward["p_value"] < 0.001
    # the bias is there: some cases' orders disagree (ties), and in the A-first order alone it credited A
    assert forward["ties"] > 0 and 0.5 < forward["consistency"] < 0.95
    cases = poor.ab(good, cache_dir=tmp_path / "cache").cases
    assert (cases.get_column("a_first") == "A").sum() > 0
    # code checks first: those cases are B's without a judge call, and only the others cost two calls each
    assert forward["decided_by_code"] == {
        "wins_b": BY_CODE, "wins_a": 0, "cases": [f"q{i:03d}" for i in range(BY_CODE)]
    }  # fmt: skip
    assert forward["judged"] == N - BY_CODE
    assert len(server.requests) == 2 * (N - BY_CODE)
    assert forward["judge_served"] == ["simulated-judge"]

    # the other way round: the same verdicts mirrored, replayed from the cache (no new request)
    backward = good.ab(poor, cache="replay", cache_dir=tmp_path / "cache").to_json()
    assert (backward["wins_a"], backward["wins_b"], backward["ties"]) == (
        forward["wins_b"], forward["wins_a"], forward["ties"]
    )  # fmt: skip
    assert backward["win_rate_b"] == 0.0 and backward["p_value"] == forward["p_value"]
    assert len(server.requests) == 2 * (N - BY_CODE)
    assert set(forward["by_slice"]) == {"chat", "direct"}
    assert sum(s["n"] for s in forward["by_slice"].values()) == N


def test_the_command_prints_and_writes_json(
    runs: tuple[ek.Run, ek.Run, LocalAnthropicServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    poor, good, _ = runs
    cache = str(tmp_path / "cache")
    assert main(["ab", str(poor.path), str(good.path), "--cache-dir", cache, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in (
        "n",
        "wins_b",
        "wins_a",
        "ties",
        "win_rate_b",
        "win_rate_b_ci",
        "consistency",
        "p_value",
        "by_slice",
    ):
        assert key in data
    assert main(["ab", str(poor.path), str(good.path), "--cache-dir", cache]) == 0
    text = capsys.readouterr().out
    assert "win rate of B 100.0%" in text and "simulated" in text and "sign test" in text
    assert "decided by code checks (no judge call): 4 cases" in text


def test_a_check_that_is_not_there_is_a_clear_error(
    runs: tuple[ek.Run, ek.Run, LocalAnthropicServer], capsys: pytest.CaptureFixture[str]
) -> None:
    poor, good, _ = runs
    assert main(["ab", str(poor.path), str(good.path), "--check", "nope"]) == 2
    assert "--check nope: suite refund-ab has no judge check of that name (its judge checks: answer)" in (
        capsys.readouterr().err
    )


def test_three_runs_are_ranked_by_bradley_terry(
    runs: tuple[ek.Run, ek.Run, LocalAnthropicServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    poor, good, _ = runs
    mid = ek.run(poor.manifest.suite_path, f"{poor.manifest.suite_path}/mid.py:predict", judge="off",
                 runs_dir=tmp_path / "runs", cache_dir=tmp_path / "cache", progress=False)  # fmt: skip
    args = [
        "ab",
        str(mid.path),
        str(poor.path),
        str(good.path),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--json",
    ]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    ranked = [row["run"].split(" ")[0] for row in data["ranking"]]
    assert ranked == [good.path.name, mid.path.name, poor.path.name]
    top, middle, bottom = data["ranking"]
    assert top["ci"][0] > middle["ci"][1] and middle["ci"][0] > bottom["ci"][1]  # clearly apart
    assert len(data["pairs"]) == 3


def test_criteria_and_judge_model_are_sent(
    runs: tuple[ek.Run, ek.Run, LocalAnthropicServer], tmp_path: Path
) -> None:
    poor, good, server = runs
    result = poor.ab(good, criteria=["Mentions the delivery date"], judge_model="claude-sonnet-4-6",
                     cache_dir=tmp_path / "cache").to_json()  # fmt: skip
    assert result["judge_model"] == "claude-sonnet-4-6"
    bodies = [r.body for r in server.requests_to("/v1/messages") if r.body]
    assert len(bodies) == 2 * (N - BY_CODE)
    assert all(b["model"] == "claude-sonnet-4-6" for b in bodies)
    sent = [json.dumps(b) for b in bodies]
    assert all("Mentions the delivery date" in s and "refund window of 30 days" not in s for s in sent)
    # "delivery" is in the good answer only: it still wins every decisive case
    assert result["wins_a"] == 0 and result["wins_b"] > 0


def test_a_checks_field_is_what_is_compared(
    make_suite: Callable[..., Path],
    make_anthropic_server: Callable[..., LocalAnthropicServer],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    rubric = ["States the refund window of 30 days"]
    cases = [
        {"id": f"f{i}", "input": f"Order {i}: how long is the refund window?", "slice": "direct",
         "checks": [{"kind": "judge", "name": "reply", "field": "reply", "rubric": rubric}]}
        for i in range(3)
    ]  # fmt: skip
    good = (
        'def predict(input):\n    return {"reply": "The refund window is 30 days.", "internal": "SECRET-A"}\n'
    )
    poor = 'def predict(input):\n    return {"reply": "Write to us.", "internal": "SECRET-B"}\n'
    suite = make_suite(cases, name="fields", files={"good.py": good, "poor.py": poor})
    made = [
        ek.run(suite, f"{suite}/{n}.py:predict", judge="off", runs_dir=tmp_path / "runs", progress=False,
               cache_dir=tmp_path / "cache")
        for n in ("poor", "good")
    ]  # fmt: skip
    server = make_anthropic_server(judge=SimulatedJudge(), simulated=True)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local-test")
    result = made[0].ab(made[1], check="reply", cache_dir=tmp_path / "cache").to_json()
    assert (result["wins_b"], result["wins_a"]) == (3, 0)
    sent = [json.dumps(r.body) for r in server.requests_to("/v1/messages") if r.body]
    assert len(sent) == 6 and not any("SECRET" in s for s in sent)


def test_the_html_page_shows_win_rates_per_slice_and_each_slices_cases_side_by_side(
    runs: tuple[ek.Run, ek.Run, LocalAnthropicServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    poor, good, _ = runs
    page = tmp_path / "ab.html"
    argv = ["ab", str(poor.path), str(good.path), "--cache-dir", str(tmp_path / "cache"), "--html", str(page)]
    assert main(argv) == 0
    assert f"page: {page}" in capsys.readouterr().out
    html = page.read_text(encoding="utf-8")
    result = poor.ab(good, cache="replay", cache_dir=tmp_path / "cache")
    rates = result.win_rates()
    assert set(rates["slice"]) == {"all", "chat", "direct"}
    for r in rates.iter_rows(named=True):  # each slice's rate and interval, as the text gives them
        summary = result.to_json() if r["slice"] == "all" else result.to_json()["by_slice"][r["slice"]]
        assert r["rate"] == summary["win_rate_b"] and [r["ci_low"], r["ci_high"]] == list(
            summary["win_rate_b_ci"]
        )
    assert html.count('<details class="slice">') == 2 and "<svg" in html and "simulated" in html
    # a slice's cases: both outputs and the judge's reasons in each order
    assert "The refund window is 30 days from delivery." in html and "Please write to us again" in html
    judged = result.cases.filter(pl.col("decided_by") == "judge").row(0, named=True)
    assert (
        html_escape(judged["reasoning_a_first"]) in html and html_escape(judged["reasoning_b_first"]) in html
    )
    assert "<script" not in html  # opens offline, and a click needs no script
    assert main([*argv[:3], str(good.path), "--html", str(page)]) == 2  # three runs: no single page to draw
