"""Review sampling (stratified, seeded, into a labels file the Labeller opens), the confusion chart and the
disagreement browser driven as a click drives them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

import evalkit as ek
from evalkit.calibration import (
    allocate,
    calibrate,
    read_labels,
    review_items,
    review_sample,
    write_review_sample,
)
from evalkit.charts import CELL_SELECTION, confusion_chart
from evalkit.errors import EvalkitError
from evalkit.widgets import DisagreementBrowser, Labeller

ROOT = Path(__file__).resolve().parents[2]
RPQ = ROOT / "goldens" / "refund-policy-qa"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ek.Run:
    folder = tmp_path_factory.mktemp("runs")
    return ek.run(RPQ, "baseline", judge="off", runs_dir=folder, cache_dir=folder / "cache", progress=False)


@pytest.mark.parametrize(
    ("sizes", "n", "expected"),
    [
        (
            [50, 30, 10, 5, 3, 1, 1],
            30,
            [14, 9, 3, 1, 1, 1, 1],
        ),  # every stratum gets one; the rest proportional
        ([50, 30, 10, 5, 3, 1, 1], 5, [3, 2, 0, 0, 0, 0, 0]),  # fewer than the strata: largest remainder only
        ([10, 10, 10], 7, [3, 2, 2]),
        ([3, 2], 10, [3, 2]),  # n above the total: everything
        ([40, 0, 20], 6, [4, 0, 2]),
    ],
)
def test_allocation(sizes: list[int], n: int, expected: list[int]) -> None:
    got = allocate(sizes, n)
    assert got == expected
    assert sum(got) == min(n, sum(sizes)) and all(0 <= g <= s for g, s in zip(got, sizes, strict=True))


def test_sample_is_stratified_seeded_and_opens_in_the_labeller(run: ek.Run, tmp_path: Path) -> None:
    sample = review_sample(run, 30, seed=7)
    assert len(sample.items) == 30 and len(set(sample.keys)) == 30
    slices = run.checks().filter(pl.col("check_kind") == "judge")["slice"].value_counts()
    assert {s.slice for s in sample.strata} == set(slices["slice"].to_list())
    assert all(
        s.verdict == "not judged" and s.drawn >= 1 for s in sample.strata
    )  # judge off: one verdict stratum
    for s in sample.strata:
        assert s.drawn == sum(it.slice == s.slice for it in sample.items)
    assert review_sample(run, 30, seed=7).keys == sample.keys
    assert review_sample(run, 30, seed=8).keys != sample.keys
    assert "proportional allocation" in sample.method

    path = write_review_sample(sample, tmp_path / "review.jsonl", rater="ana")
    entries = read_labels(path)
    assert [e.key for e in entries] == sample.keys
    assert all(e.passed is None and not e.skipped and e.rater == "ana" for e in entries)
    with pytest.raises(EvalkitError, match="exists"):
        write_review_sample(sample, path, rater="ana")

    items = review_items(run, path)
    assert [it.key for it in items] == sample.keys
    labeller = Labeller(items, path, rater="ana")
    assert (labeller.total, labeller.labelled, labeller.index) == (30, 0, 0)
    labeller.act("fail")
    labeller.act("pass")
    saved = read_labels(path)
    assert len(saved) == 30 and [e.passed for e in saved[:3]] == [False, True, None]
    assert saved[0].date is not None


def test_confusion_chart_selects_on_both_label_fields(run: ek.Run) -> None:
    c = calibrate(run, RPQ / "labels" / "baseline.jsonl", n_boot=20)
    comp = c.comparison("facts")
    assert comp is not None
    spec = confusion_chart(comp.overall.confusion, rows="human", columns="facts").to_dict()
    # altair lifts a layer's selection to the top with the view it belongs to
    (param,) = spec.get("params", []) + [p for layer in spec["layer"] for p in layer.get("params", [])]
    assert param["name"] == CELL_SELECTION and param["select"]["fields"] == ["human", "facts"]
    values = next(iter(spec["datasets"].values()))
    assert {(v["human"], v["facts"]): v["count"] for v in values} == {
        ("fail", "fail"): 60,
        ("fail", "pass"): 2,
        ("pass", "fail"): 2,
        ("pass", "pass"): 14,
    }


def test_browser_lists_a_clicked_cells_outputs(run: ek.Run) -> None:
    c = calibrate(run, RPQ / "labels" / "baseline.jsonl", n_boot=20)
    browser = DisagreementBrowser.from_calibration(c, machine="facts")
    assert "4 of 78 disagree" in browser.table.value
    # what a click on the (human pass, facts fail) cell sends back through the chart's selection
    browser._on_pick({"new": SimpleNamespace(value=[{"human": "pass", "facts": "fail"}])})
    assert browser.picked == ("pass", "fail")
    wrong = {d.case_id for d in c.disagreements if d.machine == "facts" and d.human}
    assert "human pass, facts fail: 2" in browser.table.value
    assert all(case in browser.table.value for case in wrong)
    browser._on_pick({"new": SimpleNamespace(value=[])})
    assert browser.picked is None and "Click a cell" in browser.table.value
    judge = DisagreementBrowser.from_calibration(c)  # offline: no judge verdict, so nothing to place
    assert judge.items.height == 0 and "78 left out" in judge.table.value


def test_figures_frame_has_a_row_per_comparison_and_group(run: ek.Run) -> None:
    c = calibrate(run, RPQ / "labels" / "baseline.jsonl", n_boot=20)
    overall = c.figures_frame()
    assert overall.height == len(c.comparisons)
    facts = overall.filter(pl.col("machine") == "facts").row(0, named=True)
    comp = c.comparison("facts")
    assert comp is not None and facts["kappa"] == comp.overall.cohen_kappa and facts["n"] == 78
    by_slice = c.figures_frame("slice").filter(pl.col("machine") == "facts")
    assert by_slice["n"].sum() == 78 and set(by_slice["slice"]) == {f.group for f in comp.by_slice}
