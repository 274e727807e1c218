"""Each notebook run, through its parameters, on a suite unlike the shipped ones: other slices, ids and check names,
no baseline, no labels, no transcripts. Each completes, and leaves the suite byte for byte as it was."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]

# end-to-end: real kernels
pytestmark = pytest.mark.slow

REVIEWS = [
    ("praise", "The cast-iron pan heats evenly. Love it.", 5),
    ("praise", "Great kettle, boils fast and quietly.", 5),
    ("praise", "The knives stay sharp after months.", 4),
    ("praise", "Lovely apron, good pockets.", 5),
    ("complaint", "The lid broke after a week.", 1),
    ("complaint", "Arrived dented and late.", 2),
    ("complaint", "The handle got hot within minutes.", 2),
    ("complaint", "Smaller than the photos suggest.", 2),
    ("question", "Does the pan work on induction?", 4),
    ("question", "Can the kettle be descaled with vinegar?", 3),
    ("question", "Is the apron machine washable?", 4),
    ("question", "Do the knives come with a guard?", 3),
]


def _suite(root: Path) -> Path:
    root.mkdir(parents=True)
    rows = []
    for i, (kind, text, stars) in enumerate(REVIEWS):
        rows.append(
            {
                "id": f"rv-{i + 1:02d}",
                "input": {"review": text, "stars": stars},
                "slice": kind,
                "source": "synthetic: written for this test",
                "checks": [
                    {"kind": "contains_none", "name": "no-money", "phrases": ["refund", "free", "discount"]},
                    {"kind": "max_words", "limit": 60},
                    {
                        "kind": "judge",
                        "name": "tone",
                        "rubric": ["Thanks the reviewer", "Answers what they raised"],
                    },
                ],
            }
        )
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "suite.toml").write_text('name = "review-replies"\n', encoding="utf-8")
    (root / "baseline.py").write_text(
        "def predict(input):\n"
        "    if input['stars'] <= 2:\n"
        "        return 'Thank you for telling us. We are sorry; please reply with your order number.'\n"
        "    return 'Thank you for your kind review! We are glad you enjoy it.'\n",
        encoding="utf-8",
    )
    return root


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _parameters(name: str, suite: Path, tmp: Path) -> dict[str, Any]:
    runs = str(tmp / "runs")
    return {
        "01_curate_goldens": {"SUITE": str(suite), "WORK_DIR": str(tmp / "work"), "TRANSCRIPTS": None,
                              "INPUT_FIELDS": None, "DUPLICATE_THRESHOLD": 90, "MIN_CASES": 20},
        "02_run_and_report": {"SUITE": str(suite), "SYSTEM": "baseline", "RUNS_DIR": runs, "REPEATS": 1},
        "03_calibrate_judge": {"SUITE": str(suite), "SYSTEM": "baseline", "JUDGE": "simulated", "LABELS": None,
                               "CHECK": None, "RUNS_DIR": runs, "RATER": "me", "SEED": 0,
                               "DATA": str(tmp / "no-data")},
        "04_bias_probes": {"DATA": str(tmp / "no-data"), "SUITE": str(suite), "SYSTEM": None, "RUNS_DIR": runs,
                           "CACHE_DIR": str(tmp / "cache"), "SEED": 0, "TARGET": 0.05, "LIVE": False,
                           "PLANTED": {"position_bias": 0.3, "verbosity_bias": 0.5, "injection_susceptibility": 0.4}},
        "05_explore_regressions": {"SUITE": str(suite), "RUNS_DIR": runs, "BASELINE": None, "BEFORE": None,
                                   "AFTER": None, "REPEATS": 2, "PLANTED_SLICE": "complaint",
                                   "AB_JUDGE": "simulated", "AB_CRITERIA": ["Answers what the reviewer raised"]},
    }[name]  # fmt: skip


NOTEBOOKS = sorted((ROOT / "notebooks").glob("0*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_notebook_runs_on_your_suite_and_leaves_it_alone(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)  # offline, as a new user starts
    suite = _suite(tmp_path / "review-replies")
    before = _digest(suite)
    nb = nbformat.read(path, as_version=4)
    params = _parameters(path.stem, suite, tmp_path)
    cell = next(c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", []))
    named = {
        line.split("=")[0].strip() for line in cell.source.splitlines() if line[:1].isupper() and "=" in line
    }
    assert named <= set(params), f"give the test's suite every parameter: {sorted(named - set(params))}"
    cell.source = "\n".join(f"{k} = {v!r}" for k, v in params.items())
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"
    ]
    assert not errors
    assert _digest(suite) == before  # nothing the notebook ran wrote to the suite
    assert not (suite / "labels").exists()
