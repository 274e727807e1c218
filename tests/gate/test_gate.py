"""`evalkit gate` and `evalkit baseline accept` on synthetic 400-case runs: exit codes, McNemar, JUnit."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from synthetic_runs import BASE, REGRESS_1, REGRESS_3, N, cid, make_run

from evalkit._baseline import accept, load_baseline, load_reference, majority_verdicts
from evalkit._gate import GateVerdict, decide, run_gate
from evalkit._report import compare
from evalkit._results import RunDir, read_run
from evalkit.errors import EvalkitError
from evalkit.stats import PairedComparison, case_verdicts, compare_runs

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalkit.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def paired(runs: dict[str, Path], a: str, b: str) -> PairedComparison:
    _, rows_a = read_run(runs[a])
    _, rows_b = read_run(runs[b])
    return compare_runs(case_verdicts(pl.concat([rows_a, rows_b])), a, b)


def test_planted_regressions_and_their_mcnemar_p(runs: dict[str, Path]) -> None:
    three = paired(runs, "base", "regress3")
    assert three.n == N and three.diff == pytest.approx(-0.03)
    assert (three.only_a, three.only_b) == (12, 0)
    noisy = paired(runs, "base", "noisy3")
    assert noisy.diff == pytest.approx(-0.03)
    assert (noisy.only_a, noisy.only_b) == (40, 28)
    assert noisy.mcnemar_exact_p > 0.05
    assert three.mcnemar_exact_p < 0.001
    for c in (three, noisy):
        expected = sm_mcnemar(c.table, exact=True).pvalue
        assert c.mcnemar_exact_p == pytest.approx(expected, rel=1e-9)


def test_three_point_drop_fails_and_one_point_passes(runs: dict[str, Path], tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    proc = cli("gate", runs["regress3"], "--baseline", runs["base"], "--junit", junit)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "FAIL" in out and "3.0 pts" in out and "95% CI" in out and "McNemar exact p" in out
    assert "12 pass->fail, 0 fail->pass" in out
    assert "pass->fail  c000" in out  # the flipped cases, by id
    assert "slices that moved" in out

    tree = ET.parse(junit)
    suite = tree.getroot()
    cases = suite.findall("testcase")
    assert len(cases) == N and suite.get("tests") == str(N)
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert len(failed) == N - len(REGRESS_3) == int(suite.get("failures") or 0)
    assert set(failed) == {cid(i) for i in range(N) if i not in REGRESS_3}
    message = failed["c000"].get("message")  # type: ignore[union-attr]
    assert message == "fail: exact: expected 'yes', got 'no' (case 0)"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["gate"] == "fail" and props["pass_to_fail"] == "12"

    proc = cli("gate", runs["regress1"], "--baseline", runs["base"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout and "1.0 pts" in proc.stdout


def test_require_significant_passes_a_noisy_drop_and_fails_a_clear_one(runs: dict[str, Path]) -> None:
    noisy = cli("gate", runs["noisy3"], "--baseline", runs["base"], "--require-significant")
    assert noisy.returncode == 0, noisy.stdout + noisy.stderr
    assert "does not call it significant" in noisy.stdout
    clear = cli("gate", runs["regress3"], "--baseline", runs["base"], "--require-significant")
    assert clear.returncode == 1, clear.stdout + clear.stderr
    assert "significant" in clear.stdout
    # Without the flag the same noisy drop fails: 3 points is more than 2.
    assert run_gate(runs["noisy3"], runs["base"]).exit_code == 1


def test_drop_equal_to_the_limit_passes(runs: dict[str, Path]) -> None:
    # 8 of 400 is exactly 2 points; float subtraction must not turn it into "more than".
    c = paired(runs, "base", "regress1")
    assert decide(c, max_drop=0.01).verdict is GateVerdict.PASS
    assert decide(c, max_drop=0.009).verdict is GateVerdict.FAIL_DROP
    noisy = decide(c, max_drop=0.0, require_significant=True)  # p = 0.125
    assert noisy.verdict is GateVerdict.PASS_NOT_SIGNIFICANT and not noisy.failed
    assert (noisy.drop, noisy.shared, noisy.p) == (pytest.approx(0.01), N, pytest.approx(0.125))


def test_the_reason_is_rendered_from_the_decision(runs: dict[str, Path]) -> None:
    noisy = decide(paired(runs, "base", "regress1"), max_drop=0.0, require_significant=True)
    shared = (
        "the pass rate dropped 1.0 pts, more than the allowed 0.0 pts, but McNemar's exact test does not call it "
        "significant (p = 0.12 >= 0.05), and --require-significant is set"
    )
    assert noisy.reason == f"PASS: {shared}"
    stale = replace(noisy, verdict=GateVerdict.FAIL_UNCALIBRATED, calibration="stale")
    assert stale.failed and stale.on_shared is GateVerdict.PASS_NOT_SIGNIFICANT
    assert stale.reason == (
        "FAIL: judged results are stale and --require-calibrated is set; calibrate the judge (evalkit calibrate "
        f"RUN --labels FILE) or drop the option. PASS: {shared}"
    )
    unverified = replace(noisy, verdict=GateVerdict.FAIL_UNVERIFIED)
    assert unverified.reason == (
        f"FAIL: the run cannot show that the pass rate held (UNVERIFIED above); on the {N} cases both sides "
        f"scored, {shared}"
    )
    better = decide(paired(runs, "regress3", "base"))
    assert better.verdict is GateVerdict.PASS and better.drop == pytest.approx(-0.03)
    assert better.reason == "PASS: the pass rate changed +3.0 pts (allowed drop 2.0 pts)"


def test_suite_version_mismatch_warns_and_fails_closed(runs: dict[str, Path]) -> None:
    # a score belongs to its version: the gate cannot show the pass rate held on other cases
    proc = cli("gate", runs["newversion"], "--baseline", runs["base"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "UNVERIFIED: the suite version differs" in proc.stdout
    assert "warning: suite version differs" in proc.stdout
    assert "v1" in proc.stdout and "v2" in proc.stdout
    first = proc.stdout.splitlines()[0]
    assert first.startswith("warning: suite version differs")
    # allowing the change needs per-case hashes; this synthetic suite folder has none to give
    allowed = run_gate(runs["newversion"], runs["base"], allow_version_change=True)
    assert allowed.exit_code == 1 and "no per-case content hashes" in allowed.text


def test_bad_inputs_exit_2(runs: dict[str, Path], tmp_path: Path) -> None:
    bad_json = tmp_path / "baseline.json"
    bad_json.write_text("{not json", encoding="utf-8")
    not_baseline = tmp_path / "other.json"
    not_baseline.write_text(json.dumps({"hello": 1}), encoding="utf-8")
    cases = [
        (runs["regress3"], tmp_path / "missing.json", "no such run directory or baseline file"),
        (runs["regress3"], bad_json, "not valid JSON"),
        (runs["regress3"], not_baseline, "not an evalkit baseline"),
        (tmp_path / "no-run", runs["base"], "no manifest.json"),
        (runs["othersuite"], runs["base"], "suite"),
        (runs["unfinished"], runs["base"], "interrupted"),
    ]
    for run, baseline, message in cases:
        with pytest.raises(EvalkitError, match=message):
            run_gate(run, baseline)
    # The CLI turns each into exit 2 with the message; two are enough to pin the wiring.
    proc = cli("gate", runs["regress3"], "--baseline", bad_json)
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr
    proc = cli("gate", runs["othersuite"], "--baseline", runs["base"])
    assert proc.returncode == 2 and "other" in proc.stderr
    proc = cli("gate", runs["regress3"])  # no --baseline
    assert proc.returncode == 2


def test_baseline_accept_round_trip(runs: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "baseline.json"
    proc = cli("baseline", "accept", runs["base"], "--to", target)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["suite"] == "synthetic" and data["suite_version"] == "v1" and data["run_id"] == "base"
    assert data["score"]["rate"] == pytest.approx(0.8) and data["score"]["scored"] == N
    assert len(data["cases"]) == N and data["cases"]["c000"] == "pass" and data["cases"]["c399"] == "fail"
    assert list(data["cases"]) == sorted(data["cases"])
    assert {"model", "model_versions", "prompt_hash"} <= set(data["system"])
    assert data["run_started_at"] and data["accepted_at"]
    assert load_baseline(target).cases == {cid(i): ("pass" if i in BASE else "fail") for i in range(N)}

    # Gating against baseline.json gives what gating against the run gives.
    from_json = run_gate(runs["regress3"], target)
    from_run = run_gate(runs["regress3"], runs["base"])
    assert from_json.exit_code == from_run.exit_code == 1
    assert from_json.decision.drop == pytest.approx(from_run.decision.drop)
    assert from_json.decision.p == pytest.approx(from_run.decision.p)

    # Another run never silently replaces a baseline; the same run is a no-op; --force replaces.
    before = target.read_bytes()
    with pytest.raises(EvalkitError, match="--force"):
        accept(runs["regress1"], to=target)
    assert target.read_bytes() == before
    assert accept(runs["base"], to=target).unchanged
    done = accept(runs["regress1"], to=target, force=True)
    assert done.replaced is not None and done.replaced.run_id == "base"
    assert load_baseline(target).run_id == "regress1"
    with pytest.raises(EvalkitError, match="interrupted"):
        accept(runs["unfinished"], to=tmp_path / "x.json")


def test_accept_defaults_to_the_suite_folder(runs: dict[str, Path]) -> None:
    done = accept(runs["base"])
    assert done.path == runs["root"] / "synthetic" / "baseline.json"
    assert load_reference(done.path).kind == "baseline"


def test_majority_over_repeats_and_errors(tmp_path: Path) -> None:
    run = make_run(tmp_path, "rep", BASE, repeats=3, errors=frozenset({399}))
    _, rows = read_run(run)
    m = majority_verdicts(case_verdicts(rows))
    assert m.height == N and set(m.get_column("repeats").to_list()) == {3}
    statuses = dict(zip(m["case_id"].to_list(), m["status"].to_list(), strict=True))
    assert statuses["c000"] == "pass" and statuses["c350"] == "fail" and statuses["c399"] == "error"
    base = make_run(tmp_path, "base", BASE)
    outcome = run_gate(run, base)
    # the errored case was scored by the baseline: the gate cannot show it held, so it fails closed
    assert outcome.exit_code == 1 and "1 ended in an error: c399" in outcome.text
    assert outcome.decision.drop == pytest.approx(0.0)
    assert "1 case errored in this run" in outcome.text
    assert run_gate(run, base, allow_unscored=1).exit_code == 0


def test_gate_reports_model_drift_first(tmp_path: Path) -> None:
    a = make_run(tmp_path, "a", BASE)
    b = make_run(tmp_path, "b", REGRESS_1)
    for path, version in ((a, "claude-x-20250101"), (b, "claude-x-20250601")):
        manifest, rows = read_run(path)
        rows = rows.with_columns(pl.lit(version).alias("system_model_version"))
        manifest.system["prompt_hash"] = "abc123"
        RunDir(path).write_manifest(manifest)
        rows.write_parquet(RunDir(path).parquet_path)
    outcome = run_gate(b, a)
    assert outcome.text.startswith("MODEL DRIFT")
    assert "claude-x-20250101" in outcome.text and "claude-x-20250601" in outcome.text
    _, rows_b = read_run(b)
    assert compare(load_reference(b).info, case_verdicts(rows_b), load_reference(a)).drift
