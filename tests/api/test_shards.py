"""Shards: `--shard I/N` runs a stable part of the cases; `evalkit merge` joins the parts into one run that gates,
case for case, like the run made at once."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import evalkit as ek
from evalkit.api import merge_runs
from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.suite import shard_of

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "goldens" / "support-triage"
BASELINE = SUITE / "baseline.json"


def _verdicts(run: ek.Run) -> pl.DataFrame:
    return run.verdicts().select("case_id", "repeat", "status").sort("case_id", "repeat")


def test_three_shards_merge_into_a_run_that_gates_like_the_whole_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = ek.run(SUITE, "baseline", out=tmp_path / "whole", progress=False)
    parts = []
    for i in (1, 2, 3):  # as three CI jobs would, each from its own folder and cache
        out = tmp_path / f"job{i}" / "run"
        code = main(["run", str(SUITE), "--shard", f"{i}/3", "--out", str(out), "-q",
                     "--cache-dir", str(tmp_path / f"job{i}" / "cache")])  # fmt: skip
        assert code == 0
        parts.append(out)
    capsys.readouterr()
    sizes = [json.loads((p / "manifest.json").read_text())["cases"] for p in parts]
    assert sum(sizes) == 159 and all(30 < n < 70 for n in sizes)  # every case once, about a third each
    # a shard alone is missing cases: the gate does not pass it
    assert ek.load_run(parts[0]).gate(BASELINE).exit_code != 0
    assert main(["merge", *map(str, parts), "--out", str(tmp_path / "merged")]) == 0
    merged = ek.load_run(tmp_path / "merged")
    assert merged.manifest.merged_from is not None and len(merged.manifest.merged_from) == 3
    assert merged.manifest.cases == 159 and merged.manifest.shard is None
    assert _verdicts(merged).equals(_verdicts(whole))
    a, b = merged.gate(BASELINE), whole.gate(BASELINE)
    assert (a.exit_code, a.decision.verdict, a.decision.drop) == (
        b.exit_code,
        b.decision.verdict,
        b.decision.drop,
    )
    assert main(["gate", str(tmp_path / "merged"), "--baseline", str(BASELINE)]) == b.exit_code


def test_merge_refuses_what_is_not_one_run(tmp_path: Path) -> None:
    one = ek.run(SUITE, "baseline", out=tmp_path / "s1", progress=False, shard=(1, 2))
    two = ek.run(SUITE, "baseline", out=tmp_path / "s2", progress=False, shard=(2, 2))
    other = ek.run(SUITE, "baseline", out=tmp_path / "r2", progress=False, shard=(2, 2), repeats=2)
    whole = ek.run(SUITE, "baseline", out=tmp_path / "whole", progress=False)
    with pytest.raises(EvalkitError, match="shard 1/2 again"):
        merge_runs([one.path, one.path], tmp_path / "m0")
    thirds = [ek.run(SUITE, "baseline", out=tmp_path / f"t{i}", progress=False, shard=(i, 3)) for i in (1, 2)]
    with pytest.raises(EvalkitError, match=r"shard\(s\) 3/3 missing"):
        merge_runs([t.path for t in thirds], tmp_path / "m0")
    with pytest.raises(EvalkitError, match="its repeats is 2, the first part's 1"):
        merge_runs([one.path, other.path], tmp_path / "m1")
    with pytest.raises(EvalkitError, match="not a shard run"):
        merge_runs([one.path, whole.path], tmp_path / "m2")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("mine")
    with pytest.raises(EvalkitError, match="already holds files"):
        merge_runs([one.path, two.path], tmp_path / "full")
    assert (
        not (tmp_path / "m0").exists() and not (tmp_path / "m1").exists() and not (tmp_path / "m2").exists()
    )
    assert merge_runs([two.path, one.path], tmp_path / "ok").manifest.cases == 159  # in any order


def test_a_case_falls_in_the_same_shard_everywhere() -> None:
    ids = [f"case-{i}" for i in range(600)]
    counts = [sum(shard_of(i, 3) == k for i in ids) for k in (1, 2, 3)]
    assert sum(counts) == 600 and min(counts) > 160  # roughly even
    assert [shard_of("tri-001", 3), shard_of("tri-002", 3), shard_of("tri-003", 3)] == [
        1,
        1,
        3,
    ]  # fixed forever
