"""Each notebook opened in JupyterLab in Chromium, run top to bottom, and used as a person would."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from labdriver import Lab, cell_count, error_outputs, open_notebook, run_all, screenshot

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def workspace(lab: Lab) -> Lab:
    """The notebooks beside a copy of the shipped goldens, so nothing a notebook writes lands in the repo."""
    shutil.copytree(ROOT / "notebooks", lab.root / "notebooks", dirs_exist_ok=True)
    shutil.copytree(ROOT / "goldens", lab.root / "goldens", dirs_exist_ok=True)
    return lab


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_jupyterlab(page: Any, workspace: Lab, notebook: Path) -> None:
    open_notebook(page, workspace, f"notebooks/{notebook.name}")
    run_all(page)
    assert error_outputs(page) == []
    screenshot(page, notebook.stem)


def test_clicking_a_slice_lists_its_failing_cases(page: Any, workspace: Lab) -> None:
    open_notebook(page, workspace, "notebooks/02_run_and_report.ipynb")
    run_all(page)
    marks = page.locator(".vega-embed svg g.mark-symbol.role-mark path")
    marks.first.wait_for(timeout=30_000)
    count = marks.count()
    assert count > 1
    target = marks.nth(count - 1)  # the last slice in the chart
    target.scroll_into_view_if_needed()
    target.click()
    heading = page.locator("h4", has_text="failing")
    heading.first.wait_for(timeout=30_000)
    assert ": " in heading.first.inner_text()
    screenshot(page, "02_slice_clicked")
    assert cell_count(page) > 0
    # each check's pass rate by slice: a heatmap whose cells read "87% of 54"
    label = page.locator(".vega-embed svg text", has_text=re.compile(r"^\d+% of \d+$"))
    label.first.wait_for(timeout=30_000)
    assert label.count() >= len({"common", "sarcasm"})  # a cell per slice at least
    label.first.scroll_into_view_if_needed()
    screenshot(page, "02_checks_by_slice")


def test_clicking_an_ab_slice_lists_both_answers_side_by_side(page: Any, workspace: Lab) -> None:
    open_notebook(page, workspace, "notebooks/05_explore_regressions.ipynb")
    run_all(page)
    frame = page.frame_locator("iframe[srcdoc]")
    summary = frame.locator("summary", has_text="billing-vs-account")
    summary.wait_for(timeout=60_000)
    page.locator("iframe[srcdoc]").scroll_into_view_if_needed()
    cells = frame.locator("details[open] td")
    assert cells.count() == 0  # every slice closed until clicked
    summary.click()
    cells.first.wait_for(timeout=10_000)
    text = frame.locator("details[open]").inner_text()
    assert "output A" in text and "output B" in text and ("A wins" in text or "B wins" in text)
    screenshot(page, "05_ab_slice_clicked")


def test_labeller_keys_record_labels_and_leave_the_notebook_alone(page: Any, workspace: Lab) -> None:
    open_notebook(page, workspace, "notebooks/03_calibrate_judge.ipynb")
    run_all(page)
    assert error_outputs(page) == []
    labels = workspace.root / "runs" / "notebooks" / "labels-reply-drafter-me.jsonl"
    before = labels.read_text().splitlines() if labels.exists() else []
    assert (
        before == []
    )  # running the notebook wrote no label in the rater's name (it used to write two a run)
    cells = cell_count(page)
    types_before = _cell_types(page)
    widget = page.locator(".ek-labeller").first
    widget.scroll_into_view_if_needed()
    widget.locator(".ek-head").click()  # focus the widget, as a person clicks it before typing
    # p and f label; a, b and m are notebook shortcuts (insert above, below, to Markdown) that must not fire
    for key in ["p", "a", "b", "m", "f", "1"]:
        page.keyboard.press(key)
    page.wait_for_timeout(1500)
    after = labels.read_text().splitlines()
    assert len(after) >= len(before) + 2, (before, after)
    verdicts = [json.loads(line) for line in after]
    assert {True, False} <= {v["passed"] for v in verdicts}
    assert cell_count(page) == cells
    assert _cell_types(page) == types_before  # no cell turned into Markdown (m) or inserted (a, b)
    screenshot(page, "03_labeller_keys")


def _cell_types(page: Any) -> list[str]:
    return list(
        page.evaluate(
            "(() => { const c = window.jupyterapp.shell.currentWidget.content.model.cells;"
            " return [...Array(c.length).keys()].map(i => c.get(i).type); })()"
        )
    )


def test_ten_labels_with_the_keyboard_show_a_kappa_offline(page: Any, workspace: Lab) -> None:
    """The tour's promise: label ten judged outputs in 03 (the simulated judge's, offline) and see kappa."""
    open_notebook(page, workspace, "notebooks/03_calibrate_judge.ipynb")
    run_all(page)
    assert error_outputs(page) == []
    widget = page.locator(".ek-labeller").first
    widget.scroll_into_view_if_needed()
    widget.locator(".ek-head").click()
    # judged outputs come first, the judge's pass before its fails: agree with the judge on each of ten
    for _ in range(10):
        verdict = widget.locator(".ek-judge").inner_text()
        page.keyboard.press("p" if "judge: pass" in verdict else "f")
        page.wait_for_timeout(250)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.ek-labeller')].some(w => /kappa [0-9.-]+ on 1\\d/.test(w.innerText))",
        timeout=30_000,
    )
    text = widget.inner_text()
    assert "judge vs you: kappa" in text and "undefined" not in text.split("judge vs you")[1].splitlines()[0]
    screenshot(page, "03_kappa_after_ten")
