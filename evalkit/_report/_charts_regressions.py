"""Altair charts for exploring a change: the noise floor, the smallest detectable change, and a suite's history.

In the style of :mod:`evalkit._report._charts` (its WIDTH and colours). The frame builders here only arrange
what :mod:`evalkit.stats` computes (``noise_floor``, ``minimum_detectable_effect``); the charts compute nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import altair as alt
import polars as pl

from evalkit._report._charts import ROW_STEP, WIDTH, WORSE, _need

if TYPE_CHECKING:
    from evalkit.stats import PowerPlan

OVERALL = "(all cases)"
BAND = "#5d6d7e"


def noise_floor_frame(verdicts: pl.DataFrame, *, by: str = "slice") -> pl.DataFrame:
    """``noise_floor`` overall and per value of `by`, for each run in `verdicts`.

    Parameters
    ----------
    verdicts:
        Case verdicts (``run.verdicts()``, or several runs' concatenated), with repeats.
    by:
        The column to split by.

    Returns
    -------
    polars.DataFrame
        One row per (run_id, group), the overall row's group being ``"(all cases)"``: the columns of
        ``evalkit.stats.noise_floor`` (sd_repeat_rates, sd_expected, mean_flip_rate, flaky_cases, ...).
    """
    from evalkit.stats import noise_floor

    _need(verdicts, ["run_id", "case_id", "repeat", "status", by], "noise_floor_frame")
    parts = [noise_floor(verdicts).with_columns(pl.lit(OVERALL).alias(by))]
    for run_id, run in verdicts.partition_by("run_id", as_dict=True).items():
        # noise_floor groups by run_id: the group stands in for it, one call per run
        tagged = run.with_columns(pl.col(by).cast(pl.String).alias("run_id"))
        per = noise_floor(tagged).rename({"run_id": by}).with_columns(pl.lit(run_id[0]).alias("run_id"))
        parts.append(per)
    return pl.concat(parts, how="diagonal_relaxed").select(by, pl.exclude(by)).sort("run_id", by)


def noise_floor_chart(
    floor: pl.DataFrame, *, by: str = "slice", title: str = "Noise floor: pass-rate sd between repeats"
) -> alt.LayerChart:
    """Per group, the sd of one pass's rate across repeats (bar) and the sd within-case noise implies (tick).

    Takes :func:`noise_floor_frame`. Two runs of an unchanged system differ by about sqrt(2) times this;
    a change smaller than that is noise. Runs sit side by side per group.
    """
    _need(floor, [by, "run_id", "sd_repeat_rates", "sd_expected", "mean_flip_rate", "flaky_cases"], "noise")
    data = floor.filter(pl.col("sd_repeat_rates").is_not_null()).with_columns(
        pl.col("sd_repeat_rates").fill_nan(None), pl.col("sd_expected").fill_nan(None)
    )
    if data.is_empty():  # one repeat: there is nothing to measure, and a blank chart would not say so
        note = "one repeat per case: no noise floor to measure (run with repeats of 2 or more)"
        text = (
            alt.Chart(pl.DataFrame({"note": [note]}))
            .mark_text(align="left", x=0, color="#555")
            .encode(text="note:N")
        )
        return cast(alt.LayerChart, alt.layer(text).properties(title=title, width=WIDTH, height=30))
    groups = data.get_column(by).unique().to_list()
    order = [OVERALL, *sorted(g for g in groups if g != OVERALL)] if OVERALL in groups else sorted(groups)
    base = alt.Chart(data).encode(
        y=alt.Y(f"{by}:N", sort=order, title=None),
        yOffset=alt.YOffset("run_id:N"),
        color=alt.Color("run_id:N", title="run"),
    )
    tooltip = [
        alt.Tooltip(f"{by}:N"),
        alt.Tooltip("run_id:N", title="run"),
        alt.Tooltip("sd_repeat_rates:Q", format=".1%", title="sd across repeats"),
        alt.Tooltip("sd_expected:Q", format=".1%", title="sd from case noise"),
        alt.Tooltip("mean_flip_rate:Q", format=".1%", title="mean flip rate"),
        alt.Tooltip("flaky_cases:Q", title="flaky cases"),
    ]
    bars = base.mark_bar(opacity=0.7, height={"band": 0.8}).encode(
        x=alt.X(
            "sd_repeat_rates:Q", axis=alt.Axis(format=".1~%"), title="sd of the pass rate across repeats"
        ),
        tooltip=tooltip,
    )
    ticks = base.mark_tick(color="#333", thickness=2).encode(x="sd_expected:Q", tooltip=tooltip)
    chart = alt.layer(bars, ticks).properties(title=title, width=WIDTH, height=alt.Step(ROW_STEP))
    return cast(alt.LayerChart, chart)


def mde_curve(plans: Mapping[str, PowerPlan], *, sizes: Sequence[int] | None = None) -> pl.DataFrame:
    """The minimum detectable effect of each plan's variance terms at each suite size.

    Parameters
    ----------
    plans:
        Label -> ``estimate_mde(...)`` plan (paired against a reference, or unpaired for one run).
    sizes:
        Numbers of cases (default: 10 to 2000, log spaced, and each plan's own n).

    Returns
    -------
    polars.DataFrame
        plan, n, mde (from ``minimum_detectable_effect`` at the plan's repeats, alpha and power), current
        (True on each plan's own n).
    """
    from evalkit.stats import minimum_detectable_effect

    grid = sorted({round(10 * 200 ** (i / 40)) for i in range(41)} if sizes is None else set(sizes))
    rows = []
    for label, p in plans.items():
        if p.omega2 != p.omega2:  # too few scored cases to measure the variance: nothing to draw
            continue
        for n in sorted(set(grid) | ({p.n} if sizes is None else set())):
            mde = minimum_detectable_effect(
                n, p.omega2, s2_a=p.s2_a, s2_b=p.s2_b, k_a=p.k_a, k_b=p.k_b, alpha=p.alpha, power=p.power
            )
            rows.append({"plan": label, "n": n, "mde": mde, "current": n == p.n})
    schema = {"plan": pl.String, "n": pl.Int64, "mde": pl.Float64, "current": pl.Boolean}
    return pl.DataFrame(rows, schema=schema)


def mde_chart(
    curve: pl.DataFrame,
    *,
    current_n: int,
    title: str = "Smallest change the suite can detect (80% power, alpha 0.05)",
) -> alt.LayerChart:
    """MDE against the number of cases (log scale), one line per plan, with the suite's size marked.

    Takes :func:`mde_curve`; the rule and label sit at `current_n`, the points at each plan's own n.
    """
    _need(curve, ["plan", "n", "mde", "current"], "mde_chart")
    data = curve.filter(pl.col("mde").is_finite())
    ns = data.get_column("n").to_list()
    scale = alt.Scale(type="log", domain=[min(ns), max(ns)], nice=False) if ns else alt.Scale(type="log")
    x = alt.X("n:Q", scale=scale, title="number of cases")
    y = alt.Y("mde:Q", axis=alt.Axis(format=".0%"), title="minimum detectable change (pass rate)")
    color = alt.Color("plan:N", title=None)
    lines = alt.Chart(data).mark_line().encode(x=x, y=y, color=color)
    tooltip = [
        alt.Tooltip("plan:N"),
        alt.Tooltip("n:Q", title="cases"),
        alt.Tooltip("mde:Q", format=".1%", title="detectable change"),
    ]
    points = (
        alt.Chart(data.filter(pl.col("current")))
        .mark_point(filled=True, size=70)
        .encode(x=x, y=y, color=color, tooltip=tooltip)
    )
    here = pl.DataFrame({"n": [current_n], "label": [f"this suite: {current_n} cases"]})
    rule = alt.Chart(here).mark_rule(color="#333", strokeDash=[4, 3]).encode(x="n:Q")
    label = (
        alt.Chart(here)
        .mark_text(align="left", dx=4, dy=-4, baseline="top", color="#333")
        .encode(x="n:Q", y=alt.value(0), text="label:N")
    )
    chart = alt.layer(lines, points, rule, label).properties(title=title, width=WIDTH, height=260)
    return cast(alt.LayerChart, chart)


def history_chart(
    history: pl.DataFrame, *, title: str = "Pass rate over time, 95% interval"
) -> alt.LayerChart:
    """A suite's pass rate per run over time: the interval as a band, the rate as a line with points, and a
    rule with a label at each run whose resolved model version changed.

    Takes ``ek.history(...)`` (started_at, run_id, rate, ci_low, ci_high, version_change, ...).
    """
    _need(history, ["started_at", "run_id", "rate", "ci_low", "ci_high", "version_change"], "history_chart")
    extra = [c for c in ("system", "system_model_version", "judge_model_version") if c in history.columns]
    data = history.filter(pl.col("rate").is_not_null()).select(
        "started_at", "run_id", "rate", "ci_low", "ci_high", "version_change", *extra
    )
    # a whole date and time on each label: left to itself, vega labels runs minutes apart ".980" and ":41"
    axis = alt.Axis(format="%Y-%m-%d %H:%M", labelAngle=-30, labelOverlap=True)
    x = alt.X("started_at:T", scale=alt.Scale(padding=16), axis=axis, title="run started (UTC)")
    y_scale = alt.Scale(domain=[0, 1])
    # one line per system: a line from one system's run to another's would read as a change over time
    color = alt.Color("system:N", title="system") if "system" in extra else alt.value(BAND)
    base = alt.Chart(data).encode(x=x, color=color)
    band = base.mark_area(opacity=0.2).encode(
        y=alt.Y("ci_low:Q", scale=y_scale, axis=alt.Axis(format="%"), title="pass rate"), y2="ci_high:Q"
    )
    # the interval also as a bar on each run: a band needs two runs of a system to show at all
    bars = base.mark_rule(strokeWidth=2, opacity=0.5).encode(
        y=alt.Y("ci_low:Q", scale=y_scale), y2="ci_high:Q"
    )
    line = base.mark_line().encode(y=alt.Y("rate:Q", scale=y_scale))
    # runs with and without a judge score different checks: where both are drawn, their points say which
    judged = data.get_column("judge_model_version").is_not_null() if "judge_model_version" in extra else None
    shape: Any = alt.Undefined
    if judged is not None and judged.any() and not judged.all():
        data = data.with_columns(
            pl.when(judged).then(pl.lit("judge on")).otherwise(pl.lit("judge off")).alias("judge")
        )
        base = alt.Chart(data).encode(x=x, color=color)
        shape = alt.Shape(
            "judge:N",
            title=None,
            scale=alt.Scale(domain=["judge on", "judge off"], range=["circle", "cross"]),
        )
    points = base.mark_point(filled=True, size=50).encode(
        y=alt.Y("rate:Q", scale=y_scale),
        shape=shape,
        tooltip=[
            alt.Tooltip("run_id:N", title="run"),
            alt.Tooltip("started_at:T", format="%Y-%m-%d %H:%M", title="started"),
            alt.Tooltip("rate:Q", format=".1%"),
            alt.Tooltip("ci_low:Q", format=".1%", title="95% low"),
            alt.Tooltip("ci_high:Q", format=".1%", title="95% high"),
            *(alt.Tooltip(f"{c}:N") for c in extra),
        ],
    )
    marks = data.filter(pl.col("version_change").is_not_null())
    rules = alt.Chart(marks).mark_rule(color=WORSE, strokeDash=[4, 3]).encode(x=x)
    labels = (
        alt.Chart(marks)
        .mark_text(align="left", dx=4, baseline="top", color=WORSE, fontSize=11)
        .encode(x=x, y=alt.value(2), text="version_change:N")
    )
    chart = alt.layer(band, bars, line, points, rules, labels).properties(
        title=title, width=WIDTH, height=260
    )
    return cast(alt.LayerChart, chart)
