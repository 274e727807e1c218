"""The notebook API as written in the docs, executed in a real Jupyter kernel (its event loop running)."""

from __future__ import annotations

from pathlib import Path

import pytest

# end-to-end: real processes, servers or kernels (`pytest -m 'not slow'` leaves them out while working)
pytestmark = pytest.mark.slow

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]

CELLS = [
    "import evalkit as ek\nsuite = ek.load_suite({suite!r})",
    "def predict(case_input):\n    return 'billing'\nrun = ek.run(suite, predict, runs_dir={runs!r})\nrun",
    "run.verdicts().height, run.checks().height",
    "run.pass_rate(by='slice')",
    "run.failures().height",
    "cmp = run.compare(ek.load_run(ek.run(suite, 'baseline', runs_dir={runs!r}).path))\ncmp.flipped().height",
    "run.report()",
    "ek.runs({runs!r}).height",
    "again = await ek.run_async(suite, 'baseline', runs_dir={runs!r}, progress=False)\nagain.status",
]


def test_the_snippet_runs_in_a_kernel(tmp_path: Path) -> None:
    runs = str(tmp_path / "runs")
    suite = str(ROOT / "goldens" / "support-triage")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c.format(suite=suite, runs=runs)) for c in CELLS]
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [cell.outputs for cell in nb.cells]
    errors = [o for out in outputs for o in out if o.output_type == "error"]
    assert not errors, errors
    shown = outputs[1][-1]["data"]
    assert "text/html" in shown and "support-triage" in shown["text/html"]
    assert outputs[2][0]["data"]["text/plain"] == "(159, 159)"
    assert outputs[5][-1]["data"]["text/plain"] != "0"  # 'billing' for everything flips cases
    assert outputs[6][0]["data"]["text/html"].startswith("<iframe")
    assert outputs[7][0]["data"]["text/plain"] == "2"
    # the notebook progress bar (a widget), not a text bar
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs[1])
    assert outputs[8][0]["data"]["text/plain"] == "'complete'"
