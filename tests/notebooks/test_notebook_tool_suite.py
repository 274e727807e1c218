"""Notebook 02 on the tool-using suite: its tool-call checks, per slice, from the offline baseline."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # a real kernel


def test_notebook_02_shows_the_tool_checks_of_order_support_per_slice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    nb = nbformat.read(ROOT / "notebooks" / "02_run_and_report.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", []))
    params = {"SUITE": str(ROOT / "goldens" / "order-support"), "SYSTEM": "baseline",
              "RUNS_DIR": str(tmp_path / "runs"), "REPEATS": 1}  # fmt: skip
    cell.source = "\n".join(f"{k} = {v!r}" for k, v in params.items())
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "row = by_check.filter((pl.col('check_name') == 'looks-up-first') & (pl.col('slice') == 'missing-lookup'))\n"
            "print('looks-up-first on missing-lookup', row['passes'][0], 'of', row['n'][0])"
        )
    )
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert (
        "looks-up-first on missing-lookup 0 of 5" in printed
    )  # the baseline skips the lookup when told an amount
