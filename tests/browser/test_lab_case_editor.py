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

    box = page.locator(".ek-case-json textarea").first  # your editor, on the working copy
    save = page.locator("button", has_text="Save new version").first
    box.scroll_into_view_if_needed()
    page.locator("select").filter(has_text="tri-004").first.select_option(
        "tri-004"
    )  # pick a case, as a person does
    page.wait_for_function(
        "() => [...document.querySelectorAll('.ek-case-json textarea')].some(t => t.value.includes('tri-004'))",
        timeout=30_000,
    )
    case = json.loads(box.input_value())
    assert case["id"] == "tri-004"
    text = json.dumps({**case, "split": "holdout"}, indent=2, ensure_ascii=False)
    box.fill("")
    box.press_sequentially(text[:40])  # keystrokes reach the kernel: half a case is invalid JSON
    page.wait_for_function("() => document.body.innerText.includes('invalid JSON')", timeout=30_000)
    assert save.is_disabled()
    screenshot(page, "01_editor_invalid")
    box.fill(text)
    page.wait_for_function(
        """() => [...document.querySelectorAll('button')].some(
             b => b.textContent.includes('Save new version') && !b.disabled)""",
        timeout=30_000,
    )
    save.click()
    page.wait_for_function(
        """() => [...document.querySelectorAll('.ek-diff')].some(d => d.innerText.includes('"split": "holdout"'))""",
        timeout=30_000,
    )
    page.locator(".ek-diff").first.scroll_into_view_if_needed()
    screenshot(page, "01_editor_saved")
    saved = curate_lab.root / "runs" / "notebooks" / "01_curate" / "support-triage" / "cases.jsonl"

    def split_of(case_id: str) -> str | None:
        rows = [json.loads(line) for line in saved.read_text().splitlines()]
        return next(r.get("split") for r in rows if r["id"] == case_id)

    assert split_of(case["id"]) == "holdout"
    # run the whole notebook again, as a person does the next day: the edit is still there
    run_all(page)
    assert error_outputs(page) == []
    assert split_of(case["id"]) == "holdout"
