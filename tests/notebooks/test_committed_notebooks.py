"""The notebooks as committed: no outputs, no widget state, the shape every notebook keeps."""

from __future__ import annotations

import json
import subprocess
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


def _as_committed(path: Path) -> dict[str, Any]:
    """The notebook as `git add` would store it: through the repository's clean filter when one is set for it
    (`make setup` installs nbstripout as one), so outputs JupyterLab saved in the working copy do not count."""

    def git(*args: str, stdin: bytes | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, input=stdin, capture_output=True, check=False)
        return done.stdout.decode("utf-8") if done.returncode == 0 else ""

    attr = git("check-attr", "filter", "--", str(path.relative_to(ROOT)))
    name = attr.rsplit(": ", 1)[-1].strip() if attr else ""
    clean = git("config", "--get", f"filter.{name}.clean").strip() if name not in ("", "unspecified") else ""
    if not clean:
        return _load(path)
    done = subprocess.run(
        clean, shell=True, input=path.read_bytes(), capture_output=True, check=True, cwd=ROOT
    )
    return dict(json.loads(done.stdout.decode("utf-8")))


def test_the_notebooks_are_there() -> None:
    assert {p.stem for p in NOTEBOOKS} >= {"02_run_and_report"}
    assert {p.stem for p in NOTEBOOKS} <= EXPECTED, "a new notebook: add it to EXPECTED"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs_or_widget_state(path: Path) -> None:
    nb = _as_committed(path)
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
