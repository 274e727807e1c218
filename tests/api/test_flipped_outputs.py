"""`RunComparison.flipped_outputs`: each flipped case with what both sides said, against a run or a baseline file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalkit as ek
from evalkit._baseline import accept

ROOT = Path(__file__).resolve().parents[2]
TRIAGE = ROOT / "goldens" / "support-triage"


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[ek.Run, ek.Run, Path]:
    """The baseline system, and one that answers "other" to the first four passing cases."""
    suite = ek.load_suite(TRIAGE)
    folder = tmp_path_factory.mktemp("flipped-outputs")
    before = ek.run(suite, "baseline", runs_dir=folder, progress=False)
    v = before.verdicts()
    broken = set(v.filter(pl.col("status") == "pass").get_column("case_id").to_list()[:4])
    ids = {json.dumps(c.input, sort_keys=True): c.id for c in suite.cases}
    from evalkit._systems import load_system

    good = load_system("baseline", suite)

    def changed(case_input: Any) -> Any:
        return "other" if ids[json.dumps(case_input, sort_keys=True)] in broken else good.fn(case_input)

    after = ek.run(suite, changed, runs_dir=folder, progress=False)
    return before, after, accept(before.path, to=folder / "baseline.json").path


def test_against_a_baseline_file_both_outputs_come_back_as_against_the_run(pair: Any) -> None:
    before, after, baseline = pair
    from_file = after.compare(baseline).flipped_outputs()
    from_run = after.compare(before).flipped_outputs()
    assert from_file.height == 4 and set(from_file.get_column("direction")) == {"pass->fail"}
    cols = ["case_id", "status_a", "output_a", "error_a", "status_b", "output_b", "error_b"]
    assert from_file.select(cols).sort("case_id").equals(from_run.select(cols).sort("case_id"))
    assert {json.loads(x) for x in from_file.get_column("output_b")} == {"other"}
    assert (
        set(from_file.get_column("status_a")) == {"pass"}
        and not from_file.get_column("output_clipped_a").any()
    )
    assert after.compare(baseline).outputs_note is None


def test_a_baseline_saved_without_outputs_leaves_side_a_empty_and_says_why(pair: Any, tmp_path: Path) -> None:
    before, after, _ = pair
    bare = accept(before.path, to=tmp_path / "baseline.json", outputs=False).path
    cmp = after.compare(bare)
    got = cmp.flipped_outputs()
    assert got.height == 4 and got.get_column("output_a").null_count() == 4
    assert got.get_column("output_b").null_count() == 0
    assert cmp.outputs_note is not None and "--no-outputs" in cmp.outputs_note
