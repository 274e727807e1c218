"""The A/B page in Chromium: a slice's cases are hidden until its name is clicked, then both outputs show."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from evalkit._ab import ABResult


def _result() -> ABResult:
    rows = []
    for i in range(12):
        verdict = "B" if i % 3 else "tie"
        rows.append(
            {
                "case_id": f"c{i:02d}",
                "slice": "billing" if i < 6 else "refunds",
                "verdict": verdict,
                "decided_by": "judge",
                "a_first": "B",
                "b_first": verdict if verdict == "B" else "A",
                "reasoning_a_first": f"reason {i} with A shown first",
                "reasoning_b_first": f"reason {i} with B shown first",
                "output_a": f'"answer A to case {i}"',
                "output_b": f'"answer B to case {i}"',
            }
        )
    return ABResult(
        run_a="run-a", run_b="run-b", judge_model="claude-opus-4-6", served=[], cases=pl.DataFrame(rows)
    )


def test_a_click_on_a_slice_lists_its_cases_side_by_side(page: Any, tmp_path: Path) -> None:
    path = _result().save(tmp_path / "ab.html")
    page.goto(path.as_uri())
    row = page.get_by_text("answer B to case 7", exact=True)
    assert not row.is_visible()  # closed until asked for
    page.get_by_text("refunds: 6 cases").click()
    assert row.is_visible()
    assert page.get_by_text("reason 7 with B shown first").is_visible()
    assert not page.get_by_text("answer B to case 1", exact=True).is_visible()  # the other slice stays closed
    assert page.locator("svg").count() >= 1 and "B's win rate" in page.content()
    page.screenshot(path=str(tmp_path / "ab.png"), full_page=True)
