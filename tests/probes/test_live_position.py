"""The live position probe against the local server's simulated judge: pairs files and suites, both orders.

A planted position bias of 0.3 (the judge answers "the one shown first" with that probability) must be
recovered within Newcombe's interval; with none planted the judge is consistent and no bias is reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError, RecordsError
from evalkit.probes import (
    LiveOptions,
    format_live_position,
    position_live,
    position_rows,
    read_pairs,
    read_verdicts,
)
from evalkit.testing import LocalAnthropicServer
from evalkit.testing.server import SimulatedJudge

CRITERIA = ["States the refund window of 30 days"]
GOOD = "The refund window is 30 days from delivery."
POOR = "Please write to us again for more help."


def write_pairs(path: Path, n: int) -> Path:
    """n pairs with a clear better output, on side A for even items and side B for odd ones."""
    rows = []
    for i in range(n):
        a, b = (GOOD, POOR) if i % 2 == 0 else (POOR, GOOD)
        rows.append(
            {"item": f"p{i:03d}", "input": f"Question {i}: how long is the window?", "output_a": a, "output_b": b,
             "criteria": CRITERIA}
        )  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def judged_by(
    make_anthropic_server: Callable[..., LocalAnthropicServer],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Callable[..., tuple[LiveOptions, LocalAnthropicServer]]:
    def start(**biases: float) -> tuple[LiveOptions, LocalAnthropicServer]:
        server = make_anthropic_server(judge=SimulatedJudge(seed=3, **biases), simulated=True)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "local-test")
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        return LiveOptions(runs_dir=tmp_path / "runs", cache_dir=tmp_path / "cache", concurrency=4), server

    return start


def test_position_probe_recovers_a_planted_bias(tmp_path: Path, judged_by: Callable[..., tuple]) -> None:
    options, server = judged_by(position_bias=0.3)
    pairs = write_pairs(tmp_path / "pairs.jsonl", 160)
    live = position_live(pairs, options=options)
    probe = live.probe
    assert probe.pairs == 160 and probe.missing == 0 and probe.decisive_pairs == 160
    assert probe.position_bias_ci is not None
    low, high = probe.position_bias_ci
    assert low <= 0.3 <= high and low > 0
    assert probe.position_bias_p is not None and probe.position_bias_p < 0.05
    # the first-shown output wins its own half and 0.3 of the other's
    assert probe.first_position_rate is not None and abs(probe.first_position_rate - 0.65) < 0.08
    assert live.n_needed is not None and live.n_needed > 0
    # the verdicts file written is the one analysed, in the pairwise verdicts shape
    assert live.verdicts_path == tmp_path / "runs" / "probes" / "position-pairs.jsonl"
    assert read_verdicts(live.verdicts_path).drop("file", "line").equals(live.verdicts)
    assert live.served == ["simulated-judge"]
    assert "verdicts written to" in format_live_position(live)
    # 2 calls per pair; a second probe comes from the response cache
    sent = len(server.requests)
    again = position_live(pairs, options=options)
    assert len(server.requests) == sent == 320
    assert again.probe == probe


def test_position_probe_without_a_bias_reports_none(tmp_path: Path, judged_by: Callable[..., tuple]) -> None:
    options, _ = judged_by()
    live = position_live(write_pairs(tmp_path / "pairs.jsonl", 40), options=options, out=tmp_path / "v.jsonl")
    assert live.verdicts_path == tmp_path / "v.jsonl"
    assert live.probe.consistency == 1.0 and live.probe.position_bias == 0.0
    assert live.probe.position_bias_p is None and live.n_needed is None
    ci = live.probe.position_bias_ci
    assert ci is not None and ci[0] <= 0 <= ci[1]
    rows = position_rows({"pairs": live.probe})
    assert rows["effect"].to_list() == [0.0]


def _suite(root: Path) -> Path:
    root.mkdir()
    rows = [
        {"id": f"c{i:02d}", "input": {"question": f"Return window for order {i}?"},
         "checks": [{"kind": "judge", "field": "answer", "rubric": CRITERIA}]}
        for i in range(30)
    ]  # fmt: skip
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "suite.toml").write_text('name = "windows"\n')
    (root / "baseline.py").write_text(f"def predict(input):\n    return {{'answer': {GOOD!r}}}\n")
    (root / "vague.py").write_text(f"def predict(input):\n    return {{'answer': {POOR!r}}}\n")
    return root


def test_position_probe_on_a_suite_pairs_two_systems(tmp_path: Path, judged_by: Callable[..., tuple]) -> None:
    options, _ = judged_by(position_bias=0.3)
    suite = _suite(tmp_path / "suite")
    live = position_live(suite, against=str(suite / "vague.py") + ":predict", options=options)
    assert live.probe.pairs == 30
    assert live.verdicts["item"].str.starts_with("c").all()
    assert live.verdicts_path.name == "position-suite.jsonl"
    # the baseline's answer is the better one; only the planted pull ever picks the vague one (shown first)
    lost = live.verdicts.filter(live.verdicts["winner"] == "B")
    assert lost.height > 0 and (lost["shown_first"] == "B").all()
    with pytest.raises(EvalkitError, match="--against"):
        position_live(suite, options=options)


def test_pairs_file_errors_name_their_line(tmp_path: Path) -> None:
    bad = tmp_path / "pairs.jsonl"
    bad.write_text(
        '{"item": "a", "output_a": "x", "output_b": "y"}\n'
        '{"item": "a", "output_a": "x", "output_b": "y"}\n'
        '{"item": "b", "output_a": "x", "criteria": "be good"}\n'
        '{"item": "c", "output_a": "x", "output_b": "y", "winner": "A"}\n'
    )
    with pytest.raises(RecordsError) as caught:
        read_pairs(bad)
    text = str(caught.value)
    assert f"{bad}:2: item: item 'a' is also on line 1" in text
    assert f"{bad}:3: output_b: missing" in text and f"{bad}:3: criteria:" in text
    assert f"{bad}:4: winner: unknown field" in text


def test_position_by_group_and_its_table() -> None:
    import polars as pl

    from evalkit.probes import position_by, position_probe, position_table

    rows = []
    for group, pulls in (("s1", 3), ("s2", 0)):
        for i in range(6):
            # the first `pulls` items go to whichever is shown first; the rest to A in both orders
            first_won = i < pulls
            rows.append({"item": f"{group}/{i}", "judge": "j", "shown_first": "A", "winner": "A"})
            rows.append(
                {
                    "item": f"{group}/{i}",
                    "judge": "j",
                    "shown_first": "B",
                    "winner": "B" if first_won else "A",
                }
            )
    frame = pl.DataFrame(rows)
    probes = position_by(frame, pl.col("item").str.replace(r"/\d+$", ""))
    assert [g for g, _ in probes] == ["s1", "s2"]
    table = position_table(probes)
    assert table["position_bias"].to_list() == [0.5, 0.0]
    s1 = position_probe(frame.filter(pl.col("item").str.starts_with("s1")))
    assert table.row(0, named=True)["consistency"] == s1.consistency == 0.5
