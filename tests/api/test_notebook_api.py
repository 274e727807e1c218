"""The notebook API (`ek.run`, `Run`, `ek.load_run`, `ek.runs`) on the shipped goldens, offline."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalkit as ek
from evalkit.errors import EvalkitError

ROOT = Path(__file__).resolve().parents[2]
TRIAGE = ROOT / "goldens" / "support-triage"
INVOICES = ROOT / "goldens" / "invoice-extraction"


@pytest.fixture(scope="module")
def suite() -> Any:
    return ek.load_suite(TRIAGE)


@pytest.fixture(scope="module")
def baseline_run(suite: Any, tmp_path_factory: pytest.TempPathFactory) -> ek.Run:
    return ek.run(suite, "baseline", runs_dir=tmp_path_factory.mktemp("runs"), progress=False)


def test_the_documented_snippet_runs(suite: Any, tmp_path: Path) -> None:
    def predict(case_input: dict[str, Any]) -> str:
        text = f"{case_input.get('subject', '')} {case_input.get('body', '')}".lower()
        return "billing" if "invoice" in text or "charge" in text else "technical"

    run = ek.run(suite, predict, runs_dir=tmp_path, progress=False)
    assert run.status == "complete"
    assert run.manifest.system["name"].endswith(":predict")
    verdicts = run.verdicts()
    assert verdicts.height == len(suite.cases)
    assert verdicts.select("case_id", "repeat").is_duplicated().sum() == 0
    checks = run.checks()
    assert checks.height == sum(len(c.checks) for c in suite.cases)
    by_slice = run.pass_rate(by="slice")
    assert set(by_slice.get_column("slice")) == set(suite.slice_counts())
    # the rate per slice is the share of passing verdicts in it
    expected = (
        verdicts.filter(pl.col("status").is_in(["pass", "fail"]))
        .group_by("slice")
        .agg((pl.col("status") == "pass").mean().alias("expected"))
    )
    joined = by_slice.join(expected, on="slice")
    assert joined.height == by_slice.height
    assert (joined.get_column("rate") - joined.get_column("expected")).abs().max() < 1e-12
    assert "<code>" in run._repr_html_() and suite.name in run._repr_html_()


def test_failures_are_every_failing_case_with_its_input_and_checks(baseline_run: ek.Run, suite: Any) -> None:
    failures = baseline_run.failures()
    failing = baseline_run.verdicts().filter(pl.col("status").is_in(["fail", "error"]))
    assert failures.height == failing.height > 0
    assert set(failures.get_column("case_id")) == set(failing.get_column("case_id"))
    inputs = {c.id: c.input for c in suite.cases}
    for row in failures.head(5).iter_rows(named=True):
        assert json.loads(row["input"]) == inputs[row["case_id"]]
        assert row["checks"] and all(set(c) >= {"check_kind", "status", "detail"} for c in row["checks"])
        assert any(c["status"] in ("fail", "error") for c in row["checks"])


def test_repeats_give_a_clustered_interval(suite: Any, tmp_path: Path) -> None:
    run = ek.run(suite, "baseline", repeats=2, runs_dir=tmp_path, progress=False)
    assert run.verdicts().height == 2 * len(suite.cases)
    rate = run.pass_rate()
    assert "n_cases" in rate.columns and rate.item(0, "n_cases") == len(suite.cases)


def test_compare_names_the_flipped_cases(baseline_run: ek.Run, suite: Any, tmp_path: Path) -> None:
    from evalkit._systems import load_system

    good = load_system("baseline", suite)
    passed = baseline_run.verdicts().filter(pl.col("status") == "pass").get_column("case_id").to_list()
    broken = set(passed[:5])

    def worse(case_input: Any) -> Any:
        out = good.fn(case_input)
        mine = next(c.id for c in suite.cases if c.input == case_input)
        return "__wrong__" if mine in broken else out

    run = ek.run(suite, worse, runs_dir=tmp_path, progress=False)
    cmp = run.compare(ek.load_run(baseline_run.path))
    flipped = cmp.flipped()
    assert set(flipped.get_column("case_id")) == broken
    assert set(flipped.get_column("direction")) == {"pass->fail"}
    assert cmp.summary()["pass_to_fail"] == 5 and cmp.summary()["fail_to_pass"] == 0
    # a baseline.json path (the suite's committed one) works too
    against_committed = run.compare(TRIAGE / "baseline.json")
    assert against_committed.summary()["n"] == len(suite.cases)
    assert "pass→fail" in cmp._repr_html_()


def test_report_displays_inline_and_saves(baseline_run: ek.Run, tmp_path: Path) -> None:
    report = baseline_run.report()
    assert report._repr_html_().startswith("<iframe srcdoc=")
    path = report.save(tmp_path / "r.html")
    assert path.read_text(encoding="utf-8") == report.html and "<html" in report.html


def test_runs_lists_every_run_newest_first(suite: Any, tmp_path: Path) -> None:
    first = ek.run(suite, "baseline", runs_dir=tmp_path, progress=False)
    second = ek.run(INVOICES, "baseline", runs_dir=tmp_path, progress=False)
    frame = ek.runs(tmp_path)
    assert frame.get_column("run_id").to_list() == [second.id, first.id]
    assert ek.runs(tmp_path, suite=suite.name).get_column("run_id").to_list() == [first.id]
    row = frame.row(1, named=True)
    assert row["rate"] == pytest.approx(first.pass_rate().item(0, "rate"))


def test_run_async_inside_a_running_loop(suite: Any, tmp_path: Path) -> None:
    async def main() -> ek.Run:
        asyncio.get_running_loop()  # as in a Jupyter cell: a loop is already running
        return await ek.run_async(suite, "baseline", runs_dir=tmp_path, progress=False)

    run = asyncio.run(main())
    assert run.status == "complete" and run.verdicts().height == len(suite.cases)


def test_the_run_directory_is_the_cli_s(baseline_run: ek.Run) -> None:
    for name in ("manifest.json", "results.jsonl", "results.parquet"):
        assert (baseline_run.path / name).is_file()
    done = subprocess.run(
        [sys.executable, "-m", "evalkit.cli", "report", str(baseline_run.path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert baseline_run.manifest.suite in done.stdout


def test_bad_arguments_are_clear_errors(suite: Any, tmp_path: Path) -> None:
    async def predict(x: Any) -> Any:
        return x

    with pytest.raises(EvalkitError, match="is `async def`"):
        ek.run(suite, predict, runs_dir=tmp_path, progress=False)
    with pytest.raises(EvalkitError, match="cannot make a system of 42"):
        ek.run(suite, 42, runs_dir=tmp_path, progress=False)  # type: ignore[arg-type]
    with pytest.raises(EvalkitError, match="repeats must be at least 1"):
        ek.run(suite, "baseline", repeats=0, runs_dir=tmp_path, progress=False)
    with pytest.raises(EvalkitError, match="not a run directory"):
        ek.load_run(tmp_path)


def test_import_evalkit_loads_neither_the_sdk_nor_polars() -> None:
    code = "import sys, evalkit; evalkit.run; print('anthropic' in sys.modules, 'polars' in sys.modules)"
    bare = "import sys, evalkit; print('anthropic' in sys.modules, 'polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", bare], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "False"]
    # naming the API does not import the SDK either: it is needed only when Claude is called
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split()[0] == "False"
