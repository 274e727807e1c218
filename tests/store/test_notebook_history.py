"""Notebook 05 reads a team's runs from the bucket: two nightly runs as "before" and "after", and the history of
every run published there."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from store_helpers import S3

import evalkit as ek

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "goldens" / "support-triage"

pytestmark = pytest.mark.slow  # a real kernel

BROKEN = """
from pathlib import Path
import importlib.util

spec = importlib.util.spec_from_file_location("kw", Path({suite!r}) / "baseline.py")
kw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kw)


def predict(ticket):
    label = kw.predict(ticket)
    return {{"billing": "account", "account": "billing"}}.get(label, label)
"""


def test_notebook_05_compares_and_draws_history_from_the_bucket(
    s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    runs = s3.url("nightly")
    broken = tmp_path / "broken.py"
    broken.write_text(BROKEN.format(suite=str(SUITE)), encoding="utf-8")
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "ci-store"))  # the CI jobs that published them
    made = [ek.run(SUITE, "baseline", runs_dir=runs, progress=False) for _ in range(2)]
    made.append(ek.run(SUITE, f"{broken}:predict", runs_dir=runs, progress=False))
    monkeypatch.setenv("EVALKIT_STORE_DIR", str(tmp_path / "laptop-store"))  # the notebook's machine
    nb = nbformat.read(ROOT / "notebooks" / "05_explore_regressions.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", []))
    params = {"SUITE": str(SUITE), "RUNS_DIR": runs, "BASELINE": None, "BEFORE": made[1].url,
              "AFTER": made[2].url, "REPEATS": 1, "PLANTED_SLICE": "billing-vs-account",
              "AB_JUDGE": "simulated", "AB_CRITERIA": ["Names the one queue the ticket belongs to"]}  # fmt: skip
    cell.source = "\n".join(f"{k} = {v!r}" for k, v in params.items())
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "assert history.height == 3, history\n"
            "assert all(p.startswith(RUNS_DIR + '/') for p in history['path'])\n"
            "print('history rows', history.height, 'rates', sorted(set(round(r, 3) for r in history['rate'])))"
        )
    )
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "history rows 3" in printed
    assert not (
        tmp_path / "runs"
    ).exists()  # nothing was written beside the notebook: all read from the store
