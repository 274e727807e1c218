"""The notebooks as committed: no outputs, no widget state, the shape every notebook keeps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = {
    "01_curate_goldens",
    "02_run_and_report",
    "03_calibrate_judge",
    "04_bias_probes",
    "05_explore_regressions",
}


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_notebooks_are_there() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {"02_run_and_report"}
    assert {p.stem for p in NOTEBOOKS} <= EXPECTED, "a new notebook: add it to EXPECTED"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs_or_widget_state(path: Path) -> None:
    nb = _load(path)
    dirty = [
        i
        for i, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)
    ]
    assert not dirty, (
        f"{path.name}: cells {dirty} have outputs; clear them (jupyter nbconvert --clear-output --inplace)"
    )
    assert "widgets" not in nb.get("metadata", {}), f"{path.name}: drop metadata.widgets (saved widget state)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_says_what_it_is_for_takes_parameters_and_ends_with_what_next(path: Path) -> None:
    nb = _load(path)
    cells = nb["cells"]
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert cells[0]["cell_type"] == "markdown" and "for" in "".join(cells[0]["source"]).lower()
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1 and tagged[0]["cell_type"] == "code", (
        f"{path.name}: one code cell tagged parameters"
    )
    assert cells[-1]["cell_type"] == "markdown" and "next" in "".join(cells[-1]["source"]).lower()
    source = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "assert " in source, f"{path.name}: an assert cell keeps the notebook honest under nbval"
