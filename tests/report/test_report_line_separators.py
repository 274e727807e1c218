"""Slice names may hold any text: a line separator in one must not break the report's charts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import evalkit as ek


def test_a_slice_named_with_line_separators_renders(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    cases = [
        {"id": "a", "input": "x", "expected": "x", "grader": "exact", "slice": "we\u2028ird"},
        {"id": "b", "input": "y", "expected": "z", "grader": "exact", "slice": "para\u2029graph"},
    ]
    suite = make_suite(
        cases, name="odd-slices", prompt=None, files={"baseline.py": "def predict(x):\n    return x\n"}
    )
    run = ek.run(suite, "baseline", runs_dir=tmp_path / "runs", progress=False)
    page = run.report().html  # Vega parsed the slice name as script and the whole page failed
    assert "<svg" in page and "we ird" in page and "para graph" in page
    assert json.loads(json.dumps(run.pass_rate(by="slice").get_column("slice").to_list())) == sorted(
        ["we\u2028ird", "para\u2029graph"]
    )
