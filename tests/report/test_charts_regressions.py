"""The regression charts: noise floor per slice, MDE against suite size, and the history with version marks."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from scipy.optimize import brentq

import evalkit as ek
from evalkit._report import (
    history_chart,
    mde_chart,
    mde_curve,
    noise_floor_chart,
    noise_floor_frame,
    to_svg,
)
from evalkit.stats import estimate_mde, noise_floor

SLICES = ("easy", "hard")


def verdicts(run_id: str, outcome: Any, *, cases: int = 30, repeats: int = 4) -> pl.DataFrame:
    rows = [
        {
            "run_id": run_id,
            "case_id": f"c{i:02d}",
            "slice": SLICES[i % 2],
            "split": "dev",
            "repeat": r,
            "status": "pass" if outcome(i, r) else "fail",
        }
        for i in range(cases)
        for r in range(repeats)
    ]
    return pl.DataFrame(rows)


def flaky(i: int, r: int) -> bool:
    # easy cases always pass but one in five; hard ones flip with the repeat on every third case
    return (i % 5 != 0) if i % 2 == 0 else ((i + r) % 2 == 0 if i % 3 == 0 else i % 4 == 1)


def test_noise_floor_frame_is_noise_floor_overall_and_per_slice() -> None:
    v = pl.concat([verdicts("before", flaky), verdicts("after", lambda i, r: i % 3 != 0)])
    frame = noise_floor_frame(v)
    assert set(frame.get_column("slice")) == {"(all cases)", *SLICES}
    assert frame.height == 2 * 3
    overall = frame.filter(pl.col("slice") == "(all cases)").drop("slice").sort("run_id")
    assert overall.equals(noise_floor(v).select(overall.columns).sort("run_id"))
    # the hard slice of `before`: the sd across repeats of that slice's per-repeat rate, as numpy has it
    hard = v.filter((pl.col("run_id") == "before") & (pl.col("slice") == "hard"))
    per_repeat = hard.group_by("repeat").agg((pl.col("status") == "pass").mean()).get_column("status")
    row = frame.filter((pl.col("run_id") == "before") & (pl.col("slice") == "hard")).row(0, named=True)
    assert row["sd_repeat_rates"] == pytest.approx(float(np.std(per_repeat.to_numpy(), ddof=1)))
    assert row["flaky_cases"] == sum(1 for i in range(30) if i % 2 == 1 and i % 3 == 0)
    assert row["n_cases"] == 15
    # a deterministic run has no noise at all
    after = frame.filter(pl.col("run_id") == "after")
    assert after.get_column("sd_repeat_rates").to_list() == [0.0, 0.0, 0.0]


def test_noise_floor_chart_draws_each_run_and_slice() -> None:
    v = pl.concat([verdicts("before", flaky), verdicts("after", lambda i, r: True)])
    chart = noise_floor_chart(noise_floor_frame(v))
    spec = chart.to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["bar", "tick"]
    assert spec["layer"][0]["encoding"]["y"]["sort"] == ["(all cases)", "easy", "hard"]
    svg = to_svg(chart)
    assert "hard" in svg and "before" in svg and "after" in svg


def test_mde_curve_evaluates_the_plan_at_each_size() -> None:
    a = verdicts("a", flaky)
    b = verdicts("b", lambda i, r: flaky(i, r) and i % 7 != 0)
    paired = estimate_mde(pl.concat([a, b]), "a", "b")
    single = estimate_mde(a, "a")
    curve = mde_curve({"paired": paired, "one run": single})
    assert set(curve.get_column("plan")) == {"paired", "one run"}
    for label, plan in (("paired", paired), ("one run", single)):
        mine = curve.filter(pl.col("plan") == label)
        here = mine.filter(pl.col("current"))
        assert here.get_column("n").to_list() == [plan.n] == [30]
        assert here.item(0, "mde") == pytest.approx(plan.mde)  # estimate_mde's own figure at the suite's size
        assert mine.get_column("mde").is_sorted(descending=True)
    # each size's figure is the sign-flip test's MDE of the plan's variance: the root of its power equation plus
    # the continuity correction, 1 / (k n); it falls about as 1/sqrt(n)
    at = mde_curve({"x": single}, sizes=[25, 100])
    got = dict(zip(at.get_column("n"), at.get_column("mde"), strict=True))
    v = single.omega2 + single.s2_a / single.k_a + single.s2_b / single.k_b
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    for n in (25, 100):
        delta = brentq(
            lambda d, n=n: d * math.sqrt(n) - za * math.sqrt(v + d * d) - zb * math.sqrt(v), 1e-9, 9
        )
        assert got[n] == pytest.approx(delta + 1 / (round(single.k_a) * n))
    assert 1.8 < got[25] / got[100] < 2.6
    assert not at.get_column("current").any()


def test_mde_chart_marks_the_suite_size() -> None:
    plan = estimate_mde(verdicts("a", flaky), "a")
    chart = mde_chart(mde_curve({"one run": plan}), current_n=30)
    spec = chart.to_dict()
    marks = [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]
    ]
    assert marks == ["line", "point", "rule", "text"]
    svg = to_svg(chart)
    assert "this suite: 30 cases" in svg


def test_a_plan_without_a_variance_draws_nothing() -> None:
    nan_plan = estimate_mde(verdicts("a", flaky, cases=1), "a", "a")
    assert mde_curve({"x": nan_plan}).is_empty()


def test_history_chart_marks_only_the_runs_whose_model_version_changed() -> None:
    from datetime import UTC, datetime

    h = pl.DataFrame(
        {
            "started_at": [datetime(2026, 11, d, 2, tzinfo=UTC) for d in (1, 2, 3, 4)],
            "run_id": ["r1", "r2", "r3", "r4"],
            "system": ["claude"] * 4,
            "rate": [0.8, 0.75, 0.55, 0.6],
            "ci_low": [0.7, 0.65, 0.45, 0.5],
            "ci_high": [0.9, 0.85, 0.65, 0.7],
            "system_model_version": ["claude-x-1", "claude-x-1", "claude-x-2", "claude-x-2"],
            "version_change": [None, None, "system claude-x-1 → claude-x-2", None],
        }
    )
    chart = history_chart(h)
    spec = chart.to_dict()
    kinds = [layer["mark"]["type"] for layer in spec["layer"]]
    assert kinds == ["area", "rule", "line", "point", "rule", "text"]
    datasets = spec["datasets"]
    rule_data = datasets[spec["layer"][4]["data"]["name"]]
    assert [r["run_id"] for r in rule_data] == ["r3"]
    assert spec["layer"][0]["encoding"]["y2"]["field"] == "ci_high"
    svg = to_svg(chart)
    assert svg.count(">system claude-x-1 → claude-x-2</text>") == 1


def test_history_chart_from_ek_history(tmp_path: Path) -> None:
    suite = ek.load_suite(Path(__file__).resolve().parents[2] / "goldens" / "support-triage")
    for _ in range(2):
        ek.run(suite, "baseline", runs_dir=tmp_path, progress=False)
    h = ek.history(tmp_path, suite=suite.name)
    assert h.height == 2 and h.get_column("version_change").null_count() == 2
    assert "Pass rate over time" in to_svg(history_chart(h))


def test_at_one_repeat_the_noise_floor_chart_says_why_it_is_empty() -> None:
    from evalkit._report import to_svg
    from evalkit.charts import noise_floor_chart

    empty = pl.DataFrame(
        {"slice": ["all"], "run_id": ["r1"], "sd_repeat_rates": [None], "sd_expected": [None],
         "mean_flip_rate": [None], "flaky_cases": [0]},
        schema_overrides={"sd_repeat_rates": pl.Float64, "sd_expected": pl.Float64, "mean_flip_rate": pl.Float64},
    )  # fmt: skip
    assert "no noise floor to measure" in to_svg(noise_floor_chart(empty))


def test_the_effect_chart_gives_each_way_of_a_bias_its_own_colour() -> None:
    from evalkit.charts import effect_chart

    rows = pl.DataFrame(
        {"label": ["a", "b", "c"], "group": ["g"] * 3, "n": [50] * 3, "effect": [-0.3, 0.0, 0.3],
         "ci_low": [-0.4, -0.1, 0.2], "ci_high": [-0.2, 0.1, 0.4]}
    )  # fmt: skip
    spec = effect_chart(rows, title="t", axis_title="x").to_dict()
    scale = next(
        layer["encoding"]["color"]["scale"] for layer in spec["layer"] if "color" in layer.get("encoding", {})
    )
    assert len(set(scale["range"])) == len(scale["domain"]) == 3


def test_the_history_chart_marks_runs_without_a_judge_apart() -> None:
    from evalkit.charts import history_chart

    history = pl.DataFrame(
        {"started_at": ["2026-12-01T10:00:00", "2026-12-02T10:00:00"], "run_id": ["a", "b"], "rate": [0.0, 0.6],
         "ci_low": [0.0, 0.4], "ci_high": [0.5, 0.8], "version_change": [None, None], "system": ["s", "s"],
         "judge_model_version": [None, "claude-opus-4-6"]},
        schema_overrides={"version_change": pl.String},
    ).with_columns(pl.col("started_at").str.to_datetime())  # fmt: skip
    spec = history_chart(history).to_dict()
    shapes = [layer["encoding"]["shape"] for layer in spec["layer"] if "shape" in layer.get("encoding", {})]
    assert shapes and shapes[0]["scale"]["domain"] == ["judge on", "judge off"]
    assert "shape" not in json.dumps(history_chart(history.head(1)).to_dict()["layer"][3]["encoding"])
