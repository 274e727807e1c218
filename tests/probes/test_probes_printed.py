"""The probes print and report the same figures as before their statistics moved to `evalkit.stats`.

Every expected value here was computed by the probes' own statistics (their Newcombe interval, McNemar test
and Wilson wrapper) on these inputs, before they were replaced by the single implementations in
`evalkit.stats`: the text must match exactly, the numbers to the last bit or two of a float.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from evalkit.probes import (
    InjectionProbe,
    LivePosition,
    VerbosityProbe,
    format_injection,
    format_live_position,
    format_position,
    format_verbosity,
    injection_effect,
    paired_difference,
    position_probe,
    position_table,
    self_preference,
    verbosity_effect,
)
from evalkit.probes._live_rubric import _About

ULP = 1e-15
POSITION = [
    ("A", "A"),
    ("A", "B"),
    ("A", "B"),
    ("B", "A"),
    ("tie", "tie"),
    ("B", None),
    ("B", "B"),
    ("A", "B"),
]
POSITION += [("A", "B")]
ORIGINAL = [True, False, False, True, False, True, False, False, True, False, True, False]
PADDED = [True, True, True, True, False, True, True, False, True, True, True, False]
SCORE_ORIGINAL = [3.0, 2.0, 2.5, 4.0, 1.0, 3.5, 2.0, 2.0, 4.5, 1.5, 3.0, 2.0]
SCORE_PADDED = [3.5, 3.0, 3.0, 4.0, 1.5, 3.5, 3.0, 2.0, 4.5, 2.5, 3.5, 2.0]
ABOUT = _About(
    suite="s",
    suite_version="1",
    system="baseline",
    judge_model="m",
    judge_served=["m"],
    run_dir="runs/x",
    outputs=12,
    errored_cases=0,
    not_text=0,
)
HEADER = "Verbosity probe: suite s (1), system baseline, judge m\n  outputs probed: 12\n  run: runs/x\n"


def _verdicts(pairs: list[tuple[str | None, str | None]]) -> pl.DataFrame:
    rows = []
    for i, (when_a_first, when_b_first) in enumerate(pairs):
        rows.append({"item": f"i{i}", "judge": "j", "shown_first": "A", "winner": when_a_first})
        rows.append({"item": f"i{i}", "judge": "j", "shown_first": "B", "winner": when_b_first})
    schema = {"item": pl.String, "judge": pl.String, "shown_first": pl.String, "winner": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")


def test_position_probe_prints_as_before() -> None:
    p = position_probe(_verdicts(POSITION))
    assert format_position(p) == (
        "Position probe, judge j\n"
        "  consistent in both orders: 37.5% [13.7%, 69.4%] of 8 items (Wilson)\n"
        "  winner shown first 58.8%, second 29.4%, tie 11.8%\n"
        # a difference and its interval both in points ("+42.9 points [-14.4%, 75.7%]" mixed the two)
        "  position bias: +42.9 points [-14.4, +75.7] on 7 items (Newcombe), McNemar exact p = 0.375\n"
        "  missing verdicts: 1"
    )
    js = p.to_json()
    assert js["consistency_ci"] == pytest.approx([0.13684428582359742, 0.6942576053973726], abs=ULP)
    assert js["position_bias_ci"] == pytest.approx([-0.14441526524459858, 0.7566978399096504], abs=ULP)
    assert js["position_bias"] == pytest.approx(3 / 7) and js["position_bias_p"] == 0.375
    live = LivePosition(p, Path("runs/probes/position-x.jsonl"), _verdicts(POSITION), 0.05, 155, ["m-1"])
    assert format_live_position(live).split("\n")[0] == "Position probe, judge j (answered by m-1)"
    assert format_live_position(live).split("\n")[-2:] == [
        "  to detect a +5.0 points position bias (80% power): 155 decisive items",
        "  verdicts written to runs/probes/position-x.jsonl",
    ]


def test_position_probe_without_an_interval_prints_none() -> None:
    ties = position_probe(_verdicts([("tie", "tie"), ("tie", "tie"), ("A", None)]))
    assert format_position(ties) == (
        "Position probe, judge j\n"
        "  consistent in both orders: 100.0% [34.2%, 100.0%] of 2 items (Wilson)\n"
        "  winner shown first 20.0%, second 0.0%, tie 80.0%\n"
        "  position bias: — on 0 items (Newcombe)\n"
        "  missing verdicts: 1"
    )
    assert ties.position_bias_ci is None and ties.position_bias_p is None
    nothing = position_probe(_verdicts([("A", None), (None, "B")]))
    assert format_position(nothing) == (
        "Position probe, judge j\n"
        "  consistent in both orders: — of 0 items (Wilson)\n"
        "  winner shown first 100.0%, second 0.0%, tie 0.0%\n"
        "  position bias: — on 0 items (Newcombe)\n"
        "  missing verdicts: 2"
    )
    table = position_table([("t", ties), ("u", nothing)]).to_dicts()
    assert table[0]["consistency_low"] == pytest.approx(0.3423802275066532, abs=ULP)
    assert [table[0][k] for k in ("consistency_high", "bias_low", "bias_high", "bias_p")] == [
        1.0,
        None,
        None,
        None,
    ]
    assert [table[1][k] for k in ("consistency", "consistency_low", "consistency_high")] == [None, None, None]


def test_verbosity_prints_as_before() -> None:
    e = verbosity_effect(ORIGINAL, PADDED, SCORE_ORIGINAL, SCORE_PADDED)
    assert format_verbosity(VerbosityProbe(ABOUT, "filler", e, pl.DataFrame())) == HEADER + (
        "  padding: filler; judge errors left out: 0\n"
        "  pass rate original 41.7%, padded 75.0% on 12 outputs\n"
        "  padded - original: +33.3 points [+0.8, +56.7] (Newcombe), 4 changed verdict(s), "
        "McNemar exact p = 0.125 (not significant at 5%)\n"
        "  mean score original 2.583, padded 3.000; difference +0.417 [+0.151, +0.682] (t)\n"
        "  to detect a +5.0 points shift (80% power): 1045 outputs"
    )
    js = e.to_json()
    assert js["pass_rate"]["ci"] == pytest.approx([0.008235968993071108, 0.5673880327298576], abs=ULP)
    assert js["score_difference_ci"] == pytest.approx([0.1514483930619751, 0.6818849402713583], abs=ULP)
    assert (js["pass_rate"]["mcnemar_p"], js["n_needed"]) == (0.125, 1045)


def test_verbosity_without_a_change_or_a_spread_prints_as_before() -> None:
    same = verbosity_effect(ORIGINAL, ORIGINAL)
    assert format_verbosity(VerbosityProbe(ABOUT, "filler", same, pl.DataFrame())) == HEADER + (
        "  padding: filler; judge errors left out: 0\n"
        "  pass rate original 41.7%, padded 41.7% on 12 outputs\n"
        "  padded - original: +0.0 points [-14.8, +14.8] (Newcombe), 0 changed verdict(s), "
        "no verdict changed: no effect seen\n"
        "  to detect a +5.0 points shift (80% power): —"
    )
    assert same.pass_rate.ci == pytest.approx((-0.14778788884650368, 0.14778788884650368), abs=ULP)
    one = verbosity_effect([True], [False], [3.0], [2.0])
    assert format_verbosity(VerbosityProbe(ABOUT, "filler", one, pl.DataFrame())).split("\n")[-4:] == [
        "  pass rate original 100.0%, padded 0.0% on 1 outputs",
        "  padded - original: -100.0 points [-100.0, +12.2] (Newcombe), 1 changed verdict(s), "
        "McNemar exact p = 1 (not significant at 5%)",
        "  mean score original 3.000, padded 2.000; difference -1.000",
        "  to detect a +5.0 points shift (80% power): 3138 outputs",
    ]
    assert one.score_difference_ci is None
    empty = paired_difference([], [])
    assert (empty.ci, empty.mcnemar_p, empty.difference) == (None, None, None)


def test_injection_prints_as_before() -> None:
    frame = pl.DataFrame(
        {
            "attack": ["ignore", "ignore", "ignore", "ignore", "praise", "praise", "praise", "fence"],
            "base_pass": [False, False, False, True, False, False, True, True],
            "attacked_pass": [True, False, True, True, False, False, False, True],
        }
    )
    effect = injection_effect(frame)
    assert format_injection(InjectionProbe(ABOUT, effect, 5, 0.05, 32, pl.DataFrame())).split("\n")[3:] == [
        "  outputs failing without an attack: 5; judge errors left out: 0",
        "  attack success (failing outputs turned into passes), Wilson 95% interval:",
        "  fence               0 / 0          —",
        "  ignore              2 / 3      66.7% [20.8%, 93.9%]",
        "  praise              0 / 2       0.0% [0.0%, 65.8%]",
        "  (all)               2 / 5      40.0% [11.8%, 76.9%]",
        "  to see an attack that succeeds 5.0% of the time (80% power): 32 failing outputs",
    ]
    js = effect.to_json()
    assert [a["ci"] for a in js["attacks"]] == [
        None,
        [0.20765960080204782, 0.9385080552796038],
        [0.0, 0.6576197724933468],
    ]
    assert js["overall"]["ci"] == [0.11762077423264794, 0.769275718723987]


def test_self_preference_reports_as_before() -> None:
    frame = pl.DataFrame(
        {
            "system": ["a"] * 6 + ["b"] * 5,
            "judge_pass": [True, True, True, False, True, True, True, False, True, False, False],
            "human_pass": [True, False, False, False, True, False, True, False, True, False, False],
        }
    )
    a, b = (s.difference for s in self_preference(frame).systems)
    assert (a.difference, a.discordant, a.mcnemar_p) == (0.5, 3, 0.25)
    assert a.ci == pytest.approx((-0.040303878432049856, 0.7731752842826356), abs=ULP)
    assert (b.difference, b.discordant, b.mcnemar_p) == (0.0, 0, None)
    assert b.ci == pytest.approx((-0.30732310919421185, 0.30732310919421185), abs=ULP)
