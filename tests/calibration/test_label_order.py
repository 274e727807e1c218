"""The labeller's order: with judged_first, judged outputs come first, the judge's passes and fails taking turns."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from evalkit.calibration import label_items
from evalkit.suite import load_suite


def test_judged_outputs_first_passes_and_fails_taking_turns(tmp_path: Path) -> None:
    rows = [{"id": f"c{i}", "input": f"q{i}", "rubric": ["Answers the question"]} for i in range(6)]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = load_suite(tmp_path / "cases.jsonl")
    # c0, c1 not judged (a cheaper check failed); c2, c3, c4 failed by the judge; c5 passed
    status = ["skipped", "skipped", "fail", "fail", "fail", "pass"]
    frame = pl.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(6)],
            "repeat": [0] * 6,
            "check_kind": ["judge"] * 6,
            "check_name": ["judge"] * 6,
            "check_index": [0] * 6,
            "output_hash": [f"h{i}" for i in range(6)],
            "status": status,
            "passed": [None, None, False, False, False, True],
            "slice": ["s"] * 6,
            "output": [json.dumps(f"a{i}") for i in range(6)],
            "judge_reasoning": [None] * 6,
        }
    )
    plain = [it.case_id for it in label_items(frame, suite)]
    assert plain == ["c0", "c1", "c2", "c3", "c4", "c5"]  # case order, as before
    first = [it.case_id for it in label_items(frame, suite, judged_first=True)]
    assert first == [
        "c5",
        "c2",
        "c3",
        "c4",
        "c0",
        "c1",
    ]  # a pass, a fail, then the other fails, then unjudged
    assert [it.judge_passed for it in label_items(frame, suite, judged_first=True)][:2] == [True, False]
