"""Notebook 01's case editor in JupyterLab: typing in its text area validates, and Save writes a new version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from labdriver import Lab, error_outputs, open_notebook, run_all, screenshot

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def curate_lab(lab: Lab) -> Lab:
    shutil.copytree(ROOT / "notebooks", lab.root / "notebooks", dirs_exist_ok=True)
    shutil.copytree(ROOT / "goldens", lab.root / "goldens", dirs_exist_ok=True)
    return lab


def test_01_curate_editor_typing_validates_and_save_writes(page: Any, curate_lab: Lab) -> None:
    open_notebook(page, curate_lab, "notebooks/01_curate_goldens.ipynb")
    run_all(page)
    assert error_outputs(page) == []
    chart = page.locator(".vega-embed svg g.mark-rect.role-mark path")
    chart.first.wait_for(timeout=30_000)
    assert chart.count() >= 9  # a bar per slice and split

    box = page.locator(".ek-case-json textarea")
    save = page.locator("button", has_text="Save new version")
    box.scroll_into_view_if_needed()
    # the notebook's last check left an invalid edit in the editor: Save is off and the problem is shown
    assert save.is_disabled()
    assert "unknown grader" in page.locator(".widget-html", has_text="unknown grader").first.inner_text()
    screenshot(page, "01_editor_invalid")

    text = box.input_value().replace('"exactly"', '"exact"').replace('"holdout"', '"dev"')
    box.fill("")
    box.press_sequentially(text[:40])  # keystrokes reach the kernel: half a case is invalid JSON
    page.wait_for_function("() => document.body.innerText.includes('invalid JSON')", timeout=30_000)
    assert save.is_disabled()
    box.fill(text)
    page.wait_for_function(
        """() => [...document.querySelectorAll('button')].some(
             b => b.textContent.includes('Save new version') && !b.disabled)""",
        timeout=30_000,
    )
    save.click()
    # the earlier save's diff is still shown until this one replaces it: wait for this one's
    page.wait_for_function(
        """() => [...document.querySelectorAll('.ek-diff')].some(d => d.innerText.includes('"split": "dev"'))""",
        timeout=30_000,
    )
    page.locator(".ek-diff").first.scroll_into_view_if_needed()
    screenshot(page, "01_editor_saved")
    saved = curate_lab.root / "runs" / "notebooks" / "01_curate" / "support-triage" / "cases.jsonl"
    line = json.loads(saved.read_text().splitlines()[3])
    assert line["id"] == "tri-004" and line["split"] == "dev"
