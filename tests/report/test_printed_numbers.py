"""Printed numbers agree with computed ones: p against alpha, signs only on changes, points for differences,
per-slice n in cases, the noise floor said for what it is, and slice change intervals that are not clipped."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from test_report import make_run

from evalkit._baseline import Reference, RunInfo, load_reference
from evalkit._gate import GateDecision, GateVerdict, render_reason
from evalkit._report import build_report, ci_pts, comparison_lines, format_report, pts, pval, render_html
from evalkit._report import compare as compare_reference
from evalkit._results import read_run
from evalkit.stats import newcombe_paired

LEVELS = (0.1, 0.05, 0.02, 0.01, 0.005, 0.001)


def test_a_p_just_below_alpha_prints_below_it_in_the_gate() -> None:
    # McNemar's exact p 0.0498 printed as 0.05 made the gate say "p = 0.05 < 0.05"
    d = GateDecision(GateVerdict.FAIL_DROP, 0.06, 0.02, True, 0.0498, 0.05, 100)
    assert "(p = 0.0498 < 0.05)" in render_reason(d)
    held = GateDecision(GateVerdict.PASS_NOT_SIGNIFICANT, 0.06, 0.02, True, 0.0502, 0.05, 100)
    assert "(p = 0.05 >= 0.05)" in render_reason(held)


@pytest.mark.parametrize("digits", [2, 3])
def test_a_printed_p_stands_on_the_side_of_every_level_that_p_does(digits: int) -> None:
    near = [a * (1 + k * 1e-4) for a in LEVELS for k in range(-60, 61)]
    near += [a * (1 + k * 1e-9) for a in LEVELS for k in (-3, -1, 1, 3)]
    for p in near:
        shown = pval(p, digits=digits)
        for a in LEVELS:
            assert (float(shown) < a) == (p < a), (p, shown, a)
        mantissa = shown.split("e")[0].replace(".", "").lstrip("0")
        # more digits only near a level, and no more than it takes (p is 1e-9 from the level at the closest)
        assert len(mantissa) == digits or min(abs(p / a - 1) for a in LEVELS) < 10 ** (1 - digits)
        assert len(mantissa) <= 10
    # away from a level the usual two (or three) significant digits
    assert [pval(x) for x in (0.375, 0.0123, 2.5e-6, 1.0)] == ["0.38", "0.012", "2.5e-06", "1"]
    assert pval(0.375, digits=3) == "0.375" and pval(float("nan")) == "n/a"
    assert pval(0.0249, alpha=0.025) == "0.0249" and pval(0.0249) == "0.025"


def test_probes_print_p_on_the_right_side_of_5_percent() -> None:
    from evalkit.probes._live_text import _significance

    assert _significance(0.04996) == "McNemar exact p = 0.04996 (significant at 5%)"
    assert _significance(0.125) == "McNemar exact p = 0.125 (not significant at 5%)"


def test_a_spread_prints_without_a_sign_and_a_change_with_one() -> None:
    assert pts(0.032, signed=False) == "3.2 pts" and pts(0.032) == "+3.2 pts"


def _runs(tmp_path: Path, repeats: int) -> tuple[Path, Path]:
    before = make_run(tmp_path, "before", lambda i, r: i < 30 or (i < 50 and r != i % 3), repeats=repeats)
    after = make_run(tmp_path, "after", lambda i, r: i < 28 or (i < 50 and r != i % 3), repeats=repeats)
    return before, after


def test_with_repeats_the_noise_floor_sd_prints_without_a_sign(tmp_path: Path) -> None:
    before, after = _runs(tmp_path, repeats=3)
    manifest, rows = read_run(after)
    report = build_report(manifest, rows, load_reference(before))
    assert report.noise is not None and report.noise["sd_repeat_rates"] > 0
    text = format_report(report)
    # a standard deviation has no direction: "sd +2.9 pts" read as a change
    sd = f"{100 * report.noise['sd_repeat_rates']:.1f} pts"
    assert f"repeat-to-repeat sd {sd}," in text and not re.search(r"sd [+-]\d", text)


def test_with_repeats_the_slice_tables_count_cases(tmp_path: Path) -> None:
    before, after = _runs(tmp_path, repeats=3)
    manifest, rows = read_run(after)
    report = build_report(manifest, rows, load_reference(before))
    text = format_report(report)
    # 60 cases in three slices of 20, run 3 times each: each slice holds 20 cases, not 60 rows
    table = text[text.index("  slice") :].split("\n\n")[0].split("\n")
    assert [line.split()[1] for line in table[1:]] == ["20", "20", "20"]
    assert "(n: cases, 3 repeats each)" in table[0]
    page = render_html(report)
    slices = page[page.index("<h2>Pass rate by slice</h2>") : page.index("<h2>Change by slice</h2>")]
    assert slices.count('<td class="num">20</td>') == 3 and '<td class="num">60</td>' not in slices
    assert "<th>scored cases (3 repeats each)</th>" in slices


def test_the_noise_floor_says_what_its_sd_is(tmp_path: Path) -> None:
    before, _ = _runs(tmp_path, repeats=3)
    manifest, rows = read_run(before)
    report = build_report(manifest, rows)
    assert report.noise is not None
    page = render_html(report)
    noise = page[page.index("<h2>Noise floor</h2>") : page.index("<h2>Minimum detectable effect</h2>")]
    # one repeat's sd is not the noise of a three-repeat average, and no figure here decides a change
    assert "a change smaller than this is not a change" not in noise
    average = pts(report.noise["sd_repeat_rates"] / 3**0.5, signed=False)
    assert (
        f"averages 3 repeats: from repeat noise alone its sd is about &radic;3 times smaller, {average}"
        in noise
    )
    assert "sd of one repeat's pass rate across repeats" in noise and "+" not in noise


def test_one_repeat_keeps_n_as_it_was(tmp_path: Path) -> None:
    before, after = _runs(tmp_path, repeats=1)
    manifest, rows = read_run(after)
    report = build_report(manifest, rows, load_reference(before))
    text = format_report(report)
    table = text[text.index("  slice") :].split("\n\n")[0].split("\n")
    assert table[0].split() == ["slice", "n", "pass", "95%", "CI"]
    assert [line.split()[1] for line in table[1:]] == ["20", "20", "20"]


def _slice_of_eight() -> pl.DataFrame:
    """A slice of 8 cases: one passed in the baseline, none in this run."""
    rows = []
    for i in range(8):
        for run, passed in (("A", i == 0), ("B", False)):
            status = "pass" if passed else "fail"
            rows.append({"run_id": run, "case_id": f"c{i}", "repeat": 0, "slice": "small", "split": "dev"})
            rows[-1]["status"] = status
    return pl.DataFrame(rows)


def test_a_small_slice_prints_its_newcombe_interval_unclipped() -> None:
    from evalkit._report import slice_deltas

    deltas = slice_deltas(_slice_of_eight(), "A", "B").row(0, named=True)
    # clipped at -rate_a it printed "-12.5 to +21.5 pts": the true change may well be below -12.5 pts
    assert ci_pts(deltas["ci_low"], deltas["ci_high"]) == "-47.1 to +21.5 pts"
    assert (deltas["ci_low"], deltas["ci_high"]) == newcombe_paired(0, 1, 0, 7)


def test_the_text_report_prints_the_unclipped_slice_interval() -> None:
    frame = _slice_of_eight()
    info_a = RunInfo("A", "s", "v1", None, "claude", None, (), None, None, ())
    reference = Reference(Path("base"), "run", info_a, frame.filter(pl.col("run_id") == "A"))
    c = compare_reference(replace(info_a, run_id="B"), frame.filter(pl.col("run_id") == "B"), reference)
    line = next(x for x in comparison_lines(c) if x.strip().startswith("small"))
    assert "12.5% -> 0.0%  -12.5 pts  95% CI -47.1 to +21.5 pts" in line
