"""baseline.json's stored outputs: written from a run, clipped, stable, optional, and read back located."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalkit._baseline import (
    OUTPUT_CAP,
    TEXT_CAP,
    accept,
    dump_baseline,
    load_baseline,
    load_reference,
)
from evalkit._gate import run_gate
from evalkit._results import CaseResult, CheckResult, Manifest, RunDir, read_run
from evalkit.errors import EvalkitError

ROOT = Path(__file__).resolve().parents[2]
N = 40
LONG = "x" * (OUTPUT_CAP + 500)


def _output(i: int, repeat: int, ok: bool) -> Any:
    if i == 3:
        return LONG  # a plain-text output over the cap
    if i == 4:
        return {"label": "yes" if ok else "no", "notes": ["n"] * 2000}  # a structured one over the cap
    return f"answer {i} repeat {repeat} {'yes' if ok else 'no'}"


def make_run(root: Path, run_id: str, passes: Any, *, repeats: int = 1) -> Path:
    """A run of a synthetic suite: an exact check and a judge check whose reasoning is long for case 5."""
    suite = root / "suite"
    suite.mkdir(parents=True, exist_ok=True)
    cases = [json.dumps({"id": f"c{i:02d}", "input": f"q{i}", "expected": "yes"}) for i in range(N)]
    (suite / "cases.jsonl").write_text("\n".join(cases) + "\n", encoding="utf-8")
    results = []
    for i in range(N):
        for r in range(repeats):
            ok = bool(passes(i, r))
            reasoning = ("because " * 400) if i == 5 else f"reason {i}"
            checks = [
                CheckResult(
                    index=0,
                    kind="exact",
                    name="exact",
                    field="label",
                    tier="exact",
                    status="pass" if ok else "fail",
                    passed=ok,
                    detail="matches" if ok else f"expected 'yes', got 'no' ({i})",
                ),
                CheckResult(
                    index=1,
                    kind="judge",
                    name="tone",
                    tier="judge",
                    status="pass" if ok else "skipped",
                    passed=True if ok else None,
                    skipped_reason=None if ok else "a cheaper check failed",
                    judge_reasoning=reasoning if ok else None,
                ),
            ]
            results.append(
                CaseResult(
                    run_id=run_id,
                    suite="synthetic",
                    suite_version="v1",
                    case_id=f"c{i:02d}",
                    slice=("easy", "hard")[i % 2],
                    repeat=r,
                    status="pass" if ok else "fail",
                    output=_output(i, r, ok),
                    system="python",
                    checks=checks,
                )
            )
    run = RunDir(root / "runs" / run_id)
    run.write_manifest(
        Manifest(
            run_id=run_id,
            suite="synthetic",
            suite_version="v1",
            suite_path=str(suite),
            cases=N,
            repeats=repeats,
            system={"kind": "python", "name": "synthetic"},
            status="complete",
        )
    )
    run.finalize(results)
    return run.path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("baseline-outputs")
    return {
        "before": make_run(root, "before", lambda i, r: i < 30 if r == 0 else i < 30 and i != 7, repeats=2),
        "after": make_run(root, "after", lambda i, r: 4 <= i < 30 or i == 35),
        "root": root,
    }


def test_accept_stores_each_cases_first_repeat_output_and_checks(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    target = tmp_path / "baseline.json"
    done = accept(runs["before"], to=target)
    data = json.loads(target.read_text(encoding="utf-8"))
    # the run has two repeats: format 3 keeps each repeat's verdict as well
    assert data["format_version"] == 3 and set(data["outputs"]) == set(data["cases"]) == set(data["repeats"])
    assert data["repeats"]["c07"] == ["pass", "fail"] and data["repeats"]["c00"] == ["pass", "pass"]
    _, rows = read_run(runs["before"])
    first = rows.filter(pl.col("repeat") == 0)
    for case_id in ("c00", "c07", "c31"):
        stored = data["outputs"][case_id]
        mine = first.filter(pl.col("case_id") == case_id).sort("check_index")
        assert stored["output"] == mine.get_column("output")[0]  # JSON text, as in a run's rows
        assert stored["status"] == mine.get_column("case_status")[0]
        assert [c["name"] for c in stored["checks"]] == ["exact", "tone"]
        assert [c["status"] for c in stored["checks"]] == mine.get_column("status").to_list()
        assert stored["checks"][0]["field"] == "label"
        assert stored["checks"][0]["detail"] == mine.get_column("detail")[0]
    # c07 passed its first repeat and failed the second: the verdict is the majority (a tie fails), the output
    # the first repeat's
    assert data["cases"]["c07"] == "fail" and data["outputs"]["c07"]["status"] == "pass"
    assert data["outputs"]["c31"]["checks"][1]["skipped_reason"] == "a cheaper check failed"
    assert done.baseline.outputs is not None and len(done.baseline.outputs) == N
    assert not list(tmp_path.glob(".*.tmp"))


def test_long_outputs_and_reasoning_are_clipped_and_flagged(runs: dict[str, Path], tmp_path: Path) -> None:
    target = accept(runs["before"], to=tmp_path / "baseline.json").path
    outputs = json.loads(target.read_text(encoding="utf-8"))["outputs"]
    text = outputs["c03"]
    assert text["output_clipped"] is True and text["output_chars"] == len(LONG)
    kept = json.loads(text["output"])  # still a JSON string: cut inside the text, not inside the quotes
    assert len(kept) == OUTPUT_CAP and kept.endswith("…") and kept.startswith("xxx")
    structured = outputs["c04"]
    assert structured["output_clipped"] is True and len(structured["output"]) == OUTPUT_CAP
    assert structured["output_chars"] > OUTPUT_CAP
    reasoning = outputs["c05"]["checks"][1]
    assert len(reasoning["judge_reasoning"]) == TEXT_CAP and reasoning["clipped"] is True
    # what was short stays whole, and the flags are left out
    assert "output_clipped" not in outputs["c06"] and "clipped" not in outputs["c06"]["checks"][1]
    assert json.loads(outputs["c06"]["output"]) == "answer 6 repeat 0 yes"


def test_the_file_is_stable_one_line_per_case_with_sorted_keys(runs: dict[str, Path], tmp_path: Path) -> None:
    target = accept(runs["before"], to=tmp_path / "baseline.json").path
    text = target.read_text(encoding="utf-8")
    baseline = load_baseline(target)
    assert dump_baseline(baseline) == text  # load and dump round-trips byte for byte
    start = text.index('  "outputs": {\n')
    lines = text[start:].splitlines()[1:-2]
    assert len(lines) == N and [json.loads("{" + ln.rstrip(",") + "}") for ln in lines]
    ids = [ln.split('"')[1] for ln in lines]
    assert ids == sorted(ids)
    for ln in lines:
        entry = json.loads(ln.split(": ", 1)[1].rstrip(","))
        assert list(entry) == sorted(entry)
        assert all(list(c) == sorted(c) for c in entry["checks"])


def test_the_reference_exposes_stored_rows_in_a_runs_shape(runs: dict[str, Path], tmp_path: Path) -> None:
    target = accept(runs["before"], to=tmp_path / "baseline.json").path
    ref = load_reference(target)
    assert ref.kind == "baseline" and ref.rows is None and ref.outputs_note is None
    assert ref.output_rows is not None
    _, rows = read_run(runs["before"])
    first = rows.filter(pl.col("repeat") == 0, ~pl.col("case_id").is_in(["c03", "c04", "c05"]))
    cols = ["case_id", "repeat", "check_index", "case_status", "output", "case_error", "check_name"]
    cols += ["check_kind", "check_field", "status", "detail", "error", "skipped_reason", "judge_reasoning"]
    stored = ref.output_rows.filter(~pl.col("case_id").is_in(["c03", "c04", "c05"]))
    assert (
        stored.select(cols)
        .sort("case_id", "check_index")
        .equals(first.select(cols).sort("case_id", "check_index"))
    )
    run_ref = load_reference(runs["before"])
    assert run_ref.output_rows is run_ref.rows  # a run's own rows: both views read one frame


def _format_1(target: Path, source: Path) -> Path:
    """An older evalkit's file: the verdicts-only baseline (one majority verdict per case), as format 1."""
    accept(source, to=target, outputs=False)
    old = load_baseline(target).model_copy(update={"format_version": 1, "repeats": None})
    target.write_text(dump_baseline(old), encoding="utf-8")
    assert '"repeats": {' not in target.read_text(encoding="utf-8")
    return target


def test_a_format_1_baseline_still_loads_and_says_to_re_save_it(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    old = _format_1(tmp_path / "old" / "baseline.json", runs["before"])
    baseline = load_baseline(old)
    assert baseline.format_version == 1 and baseline.outputs is None
    assert dump_baseline(baseline) == old.read_text(encoding="utf-8")  # an old file stays what it was
    ref = load_reference(old)
    assert ref.output_rows is None and ref.outputs_note is not None
    assert "format-1" in ref.outputs_note and "Re-save the baseline" in ref.outputs_note
    assert "evalkit baseline accept" in ref.outputs_note
    # the run had two repeats: the file says it keeps only majority verdicts, and what that does
    assert ref.majority_only and ref.repeats_note is not None
    assert "2-repeat run" in ref.repeats_note and "majority verdicts on both sides" in ref.repeats_note
    # re-saving from the same run adds the outputs and the repeats, without --force: the bar does not move
    done = accept(runs["before"], to=old)
    assert not done.unchanged and done.baseline.outputs is not None and done.baseline.repeats is not None
    assert load_baseline(old).format_version == 3 and load_baseline(old).cases == baseline.cases
    assert load_reference(old).repeats_note is None
    assert accept(runs["before"], to=old).unchanged


def test_the_gate_decides_alike_with_and_without_outputs(runs: dict[str, Path], tmp_path: Path) -> None:
    full = accept(runs["before"], to=tmp_path / "full" / "baseline.json").path
    old = _format_1(tmp_path / "old" / "baseline.json", runs["before"])
    bare = accept(runs["before"], to=tmp_path / "bare" / "baseline.json", outputs=False).path
    outcomes = [run_gate(runs["after"], b) for b in (full, old, bare, runs["before"])]
    assert {o.exit_code for o in outcomes} == {1}  # c00..c03 regressed
    # with and without outputs, and against the run directory itself, the gate says the same
    texts = [o.text.replace(str(b), "B") for o, b in zip(outcomes, (full, old, bare), strict=False)]
    assert texts[0] == texts[2]
    mine, theirs = (o.comparison.paired for o in (outcomes[0], outcomes[3]))
    assert (mine.diff, mine.ci_low, mine.ci_high, mine.p, mine.test) == (
        theirs.diff,
        theirs.ci_low,
        theirs.ci_high,
        theirs.p,
        theirs.test,
    )
    # the format-1 file keeps majority verdicts of a two-repeat run: both sides compare on majorities, and
    # the comparison says so
    assert "majority verdicts on both sides" in texts[1] and outcomes[1].comparison.paired.test == "mcnemar"
    for o in outcomes:
        p = o.comparison.paired
        # c00..c03 break; c07 (a tie of its two repeats, so a fail in the baseline) and c35 mend
        assert (p.only_a, p.only_b) == (4, 2)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalkit.cli", "baseline", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_no_outputs_keeps_verdicts_only_and_help_states_the_defaults(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    target = tmp_path / "baseline.json"
    proc = _cli("accept", str(runs["before"]), "--to", str(target), "--no-outputs")
    assert proc.returncode == 0, proc.stderr
    assert "verdicts only" in proc.stdout
    data = json.loads(target.read_text(encoding="utf-8"))
    assert (
        "outputs" not in data
        and data["format_version"] == 3
        and len(data["cases"]) == len(data["repeats"]) == N
    )
    note = load_reference(target).outputs_note
    assert note is not None and "--no-outputs" in note
    again = _cli("accept", str(runs["before"]), "--to", str(target))
    assert again.returncode == 0 and "outputs of 40 cases" in again.stdout and "same run" in again.stdout
    assert "outputs" in json.loads(target.read_text(encoding="utf-8"))
    helped = _cli("accept", "--help")
    flat = " ".join(helped.stdout.split())
    assert "--no-outputs" in flat and "(default: store them)" in flat
    assert f"clipped to {OUTPUT_CAP} and {TEXT_CAP} characters" in flat


@pytest.mark.parametrize(
    ("edit", "field", "says"),
    [
        (lambda e: e["checks"][1].update(status="maybe"), "checks[1].status", "Input should be"),
        (lambda e: e.update(output=42), "output", "string"),
        (lambda e: e.pop("status"), "status", "Field required"),
    ],
)
def test_a_malformed_stored_field_is_located(
    runs: dict[str, Path], tmp_path: Path, edit: Any, field: str, says: str
) -> None:
    target = accept(runs["before"], to=tmp_path / "baseline.json").path
    lines = target.read_text(encoding="utf-8").splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith('    "c12": {'))
    entry = json.loads(lines[at].split(": ", 1)[1].rstrip(","))
    edit(entry)
    lines[at] = f'    "c12": {json.dumps(entry)},'
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(EvalkitError) as err:
        load_baseline(target)
    message = str(err.value)
    assert message.startswith(f"{target}:{at + 1}: ")
    assert "case 'c12'" in message and f"outputs field {field}:" in message and says in message
    assert "evalkit baseline accept RUN --force" in message
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit.cli", "gate", str(runs["after"]), "--baseline", str(target)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2 and "case 'c12'" in proc.stderr + proc.stdout


def test_outputs_for_a_case_without_a_verdict_are_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    target = accept(runs["before"], to=tmp_path / "baseline.json").path
    text = target.read_text(encoding="utf-8").replace('"c12": "pass"', '"c12x": "pass"', 1)
    target.write_text(text, encoding="utf-8")
    with pytest.raises(EvalkitError, match=r"baseline.json:\d+: invalid baseline: case 'c12', .*no verdict"):
        load_baseline(target)
