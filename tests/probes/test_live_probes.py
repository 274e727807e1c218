"""The live verbosity and injection probes against the local server's simulated judge, through the real SDK.

A planted bias (verbosity 0.5, injection 0.4) must be recovered within the probe's interval; with none planted,
no effect is reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from evalkit._report import WIDTH
from evalkit.charts import effect_chart
from evalkit.probes import (
    ATTACKS,
    LiveOptions,
    attack,
    attack_n_needed,
    format_injection,
    format_verbosity,
    injection_probe,
    injection_rows,
    pad,
    pad_repeat_list,
    verbosity_probe,
    verbosity_rows,
)
from evalkit.stats import wilson_interval
from evalkit.testing import LocalAnthropicServer
from evalkit.testing.server import SimulatedJudge

RUBRIC = ["States the refund window of 30 days", "Explains how to print the returns label"]
# the simulated judge's word pattern (testing/server/_simulated_judge.py): its verbosity bias scales with it
JUDGE_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


def make_suite(root: Path, n: int) -> Path:
    """n cases whose baseline answer meets the first criterion and misses the second: every case fails."""
    root.mkdir()
    rows = [
        {
            "id": f"r{i:03d}",
            "input": {"question": f"How long do I have to return order {1000 + i}?"},
            "checks": [{"kind": "judge", "field": "answer", "name": "quality", "rubric": RUBRIC}],
        }
        for i in range(n)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "suite.toml").write_text('name = "refunds"\n')
    (root / "baseline.py").write_text(
        "def predict(input):\n"
        "    order = input['question'].split()[-1].rstrip('?')\n"
        "    return {'answer': f'The refund window is 30 days for order {order}.'}\n"
    )
    return root


@pytest.fixture
def judged_by(
    make_anthropic_server: Callable[..., LocalAnthropicServer],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Callable[..., LiveOptions]:
    """Point the SDK at a local server whose judge is a SimulatedJudge with the given biases."""

    def start(**biases: float) -> LiveOptions:
        server = make_anthropic_server(judge=SimulatedJudge(seed=7, **biases), simulated=True)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "local-test")
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        return LiveOptions(runs_dir=tmp_path / "runs", cache_dir=tmp_path / "cache", concurrency=4)

    return start


def _p_verbose(text: str, bias: float) -> float:
    return bias * min(1.0, len(JUDGE_WORD.findall(text)) / 150)


@pytest.mark.parametrize("padding", ["filler", "repeat-list"])
def test_verbosity_probe_recovers_a_planted_bias(
    tmp_path: Path, judged_by: Callable[..., LiveOptions], padding: str
) -> None:
    options = judged_by(verbosity_bias=0.5)
    probe = verbosity_probe(make_suite(tmp_path / "suite", 150), padding=padding, options=options)
    rows = probe.rows
    assert rows.height == 150 and probe.judge_errors == 0
    # one unmet criterion each: the planted judge passes an output with probability 0.5 * min(1, words / 150)
    texts = [f"The refund window is 30 days for order {1000 + i}." for i in range(150)]
    expected = sum(_p_verbose(pad(t, padding), 0.5) - _p_verbose(t, 0.5) for t in texts) / 150
    d = probe.effect.pass_rate
    assert d.ci is not None and d.ci[0] <= expected <= d.ci[1]
    assert d.ci[0] > 0 and d.mcnemar_p is not None and d.mcnemar_p < 0.05
    assert probe.effect.n_needed is not None and probe.effect.n_needed > 0
    assert probe.effect.score_difference is not None and probe.effect.score_difference > 0
    assert probe.about.judge_served == ["simulated-judge"]
    text = format_verbosity(probe)
    assert "answered by simulated-judge" in text
    assert "padded - original" in text and "significant at 5%" in text and padding in text


def test_verbosity_probe_without_a_bias_reports_none(
    tmp_path: Path, judged_by: Callable[..., LiveOptions]
) -> None:
    options = judged_by()
    probe = verbosity_probe(make_suite(tmp_path / "suite", 40), options=options)
    d = probe.effect.pass_rate
    assert d.difference == 0 and d.discordant == 0 and d.mcnemar_p is None
    assert d.ci is not None and d.ci[0] <= 0 <= d.ci[1]
    assert probe.effect.n_needed is None
    assert "no effect seen" in format_verbosity(probe)


def test_original_verdicts_are_the_runs_own_from_the_cache(
    tmp_path: Path, judged_by: Callable[..., LiveOptions]
) -> None:
    import evalkit as ek

    options = judged_by(verbosity_bias=0.5)
    probe = verbosity_probe(make_suite(tmp_path / "suite", 30), options=options)
    run = ek.load_run(probe.about.run_dir)
    judged = (
        run.checks().filter(pl.col("check_kind") == "judge").select("case_id", "passed", "judge_cache_hit")
    )
    mine = probe.rows.select("case_id", pl.col("original_pass").alias("passed"))
    assert judged.select("case_id", "passed").sort("case_id").equals(mine.sort("case_id"))
    # a second probe is answered from the cache: the run's judge calls are all hits
    again = verbosity_probe(tmp_path / "suite", options=options)
    rerun = ek.load_run(again.about.run_dir).checks().filter(pl.col("check_kind") == "judge")
    assert rerun["judge_cache_hit"].all()
    assert again.rows.select("padded_pass").equals(probe.rows.select("padded_pass"))


def test_injection_probe_recovers_a_planted_susceptibility(
    tmp_path: Path, judged_by: Callable[..., LiveOptions]
) -> None:
    options = judged_by(injection_susceptibility=0.4)
    probe = injection_probe(make_suite(tmp_path / "suite", 80), options=options)
    assert probe.base_failing == 80 and probe.judge_errors == 0
    assert [a.attack for a in probe.effect.attacks] == list(ATTACKS)
    overall = probe.effect.overall
    assert overall.failing == 80 * len(ATTACKS)
    assert overall.ci is not None and overall.ci[0] <= 0.4 <= overall.ci[1] and overall.ci[0] > 0
    for a in probe.effect.attacks:
        # five intervals at once: each at 99% (Bonferroni), so the family covers with 95%
        low, high = wilson_interval(a.flipped, a.failing, confidence=0.99)  # type: ignore[misc]
        assert a.failing == 80 and low <= 0.4 <= high and low > 0, a
    assert probe.n_needed == attack_n_needed(0.05) == 32
    text = format_injection(probe)
    assert "fake-fence" in text and "(all)" in text


def test_injection_probe_without_susceptibility_reports_none(
    tmp_path: Path, judged_by: Callable[..., LiveOptions]
) -> None:
    options = judged_by()
    probe = injection_probe(
        make_suite(tmp_path / "suite", 30), attacks=["fake-fence", "score-demand"], options=options
    )
    assert [a.attack for a in probe.effect.attacks] == ["fake-fence", "score-demand"]
    for a in [*probe.effect.attacks, probe.effect.overall]:
        assert a.flipped == 0 and a.ci is not None and a.ci[0] == 0.0
    # the attacked text reached the judge fenced, with the fake closing tag made inert
    assert probe.rows.height == 60


def test_padding_adds_nothing_but_length() -> None:
    text = "- Refunds take 5 days.\n- Keep the receipt."
    padded = pad_repeat_list(text)
    assert padded.startswith(text) and padded.count("Refunds take 5 days.") == 3
    assert pad("One. Two.", "repeat-list").count("Two.") == 3
    filler = pad("Short answer.", "filler")
    assert "Short answer." in filler and len(filler.split()) > 150
    with pytest.raises(ValueError, match="unknown padding"):
        pad("x", "shout")
    for name in ATTACKS:
        assert "payload" in attack("payload", name)
    with pytest.raises(ValueError, match="unknown attack"):
        attack("x", "nope")


def test_attack_n_needed_is_the_smallest_n_with_the_power() -> None:
    for rate in (0.02, 0.05, 0.2, 0.5):
        n = attack_n_needed(rate)
        assert 1 - (1 - rate) ** n >= 0.8 > 1 - (1 - rate) ** (n - 1)


def test_effect_charts_draw_every_effect(tmp_path: Path, judged_by: Callable[..., LiveOptions]) -> None:
    options = judged_by(injection_susceptibility=0.4)
    probe = injection_probe(make_suite(tmp_path / "suite", 20), attacks=["ignore-rubric"], options=options)
    rows = injection_rows(probe.effect)
    assert rows["label"].to_list() == ["ignore-rubric", "(all)"]
    spec = effect_chart(rows, title="Attack success", axis_title="success", signed=False).to_dict()
    assert spec["width"] == WIDTH
    (values,) = [d for d in spec["datasets"].values() if d and "finding" in d[0]]
    assert {v["finding"] for v in values} == {"above 0"}
    empty = verbosity_rows({})
    assert effect_chart(empty, title="t", axis_title="x").to_dict()["layer"]
