"""The runner with Python systems: journal, resume, errors, cascade results, and the run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evalkit._results import RunDir, read_run
from evalkit._runner import Runner, RunOptions, new_run_id
from evalkit._systems import PythonSystem, load_system
from evalkit.errors import EvalkitError, SystemLoadError
from evalkit.suite import load_suite


def make_suite(tmp_path: Path, n: int = 20, judge: bool = False) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    rows = []
    for i in range(n):
        checks: list[dict[str, Any]] = [
            {"kind": "exact", "field": "label", "expected": "even" if i % 2 == 0 else "odd"}
        ]
        if judge:
            checks.append({"kind": "judge", "field": "text", "rubric": ["Polite"]})
        rows.append(
            {"id": f"c{i:03d}", "input": {"n": i}, "slice": "small" if i < 10 else "large", "checks": checks}
        )
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "suite.toml").write_text('name = "parity"\n')
    (root / "baseline.py").write_text(
        "def predict(input):\n"
        "    n = input['n']\n"
        "    if n == 13:\n"
        "        raise ValueError('unlucky')\n"
        "    return {'label': 'even' if n % 2 == 0 or n % 5 == 0 else 'odd', 'text': 'hi'}\n"
    )
    return root


def options(tmp_path: Path, **kw: Any) -> RunOptions:
    return RunOptions(out_root=tmp_path / "runs", cache_dir=tmp_path / "cache", progress=False, **kw)


def test_an_output_that_is_not_json_is_an_error_result_not_a_crash(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, n=6))
    odd = [object(), {1, 2}, float("nan")]

    def predict(case_input: dict[str, Any]) -> Any:
        n = case_input["n"]
        return odd[n] if n < len(odd) else {"label": "even" if n % 2 == 0 else "odd"}

    system = PythonSystem(name="odd-outputs", fn=predict, origin="test")
    outcome = Runner(suite, system, options(tmp_path)).run()
    _, rows = read_run(outcome.run_dir)
    errors = dict(rows.filter(pl.col("case_status") == "error").select("case_id", "case_error").iter_rows())
    assert sorted(errors) == ["c000", "c001", "c002"]
    assert "odd-outputs returned object <object object at" in errors["c000"]
    assert "returned set {1, 2}" in errors["c001"] and "returned float nan" in errors["c002"]
    assert all("return a str, number, bool or None, or lists and dicts of them" in e for e in errors.values())
    assert rows.filter(pl.col("case_status") == "pass").height == 3


def test_baseline_run_writes_manifest_journal_and_parquet(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path))
    outcome = Runner(suite, load_system("baseline", suite), options(tmp_path)).run()
    manifest, rows = read_run(outcome.run_dir)
    assert manifest.status == "complete" and manifest.suite_version == suite.version
    assert manifest.system["kind"] == "python" and manifest.system["code_hash"]
    assert rows.height == 20
    by_status = dict(rows.group_by("case_status").len().iter_rows())
    # n % 5 == 0 and odd (5, 15) is wrong; 13 raises
    assert by_status == {"pass": 17, "fail": 2, "error": 1}
    err = rows.filter(pl.col("case_id") == "c013").row(0, named=True)
    assert err["status"] == "error" and err["passed"] is None and "ValueError: unlucky" in err["error"]
    assert err["error_kind"] == err["case_error_kind"] == "system_exception"
    assert rows.filter(pl.col("case_id") != "c013")["error_kind"].null_count() == rows.height - 1
    assert (outcome.run_dir / "results.jsonl").read_text().count("\n") == 20
    import gc

    assert gc.get_freeze_count() == 0  # frozen only while the run ran


def test_repeats_and_cost_of_a_free_baseline(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, n=6))
    outcome = Runner(suite, load_system("baseline", suite), options(tmp_path, repeats=3)).run()
    _, rows = read_run(outcome.run_dir)
    assert sorted(rows["repeat"].unique().to_list()) == [0, 1, 2]
    assert rows.height == 18
    assert rows["cost_usd"].to_list() == [0.0] * 18


def test_resume_runs_only_missing_and_errored_cases(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path))
    first = Runner(suite, load_system("baseline", suite), options(tmp_path)).run()
    journal = first.run_dir / "results.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    # simulate a crash: keep 8 finished lines and a torn ninth
    journal.write_text("".join(lines[:8]) + lines[8][:25])
    calls: list[int] = []

    def counting(input: Any) -> Any:
        calls.append(input["n"])
        return {"label": "even" if input["n"] % 2 == 0 else "odd"}

    system = PythonSystem("baseline", counting, "test")
    done_before = {json.loads(line)["case_id"] for line in lines[:8] if json.loads(line)["status"] != "error"}
    again = Runner(suite, system, options(tmp_path)).run(resume=first.run_dir)
    assert again.resumed == len(done_before)
    assert {f"c{n:03d}" for n in calls}.isdisjoint(done_before)
    assert len(calls) == 20 - len(done_before)
    _, rows = read_run(first.run_dir)
    assert rows.height == 20 and rows["case_id"].n_unique() == 20
    assert journal.read_text().count("\n") == 20  # compacted: one line per case


def test_resume_refuses_a_changed_suite(tmp_path: Path) -> None:
    root = make_suite(tmp_path)
    suite = load_suite(root)
    first = Runner(suite, load_system("baseline", suite), options(tmp_path)).run()
    text = (root / "cases.jsonl").read_text().replace('"expected": "odd"', '"expected": "ODD"', 1)
    (root / "cases.jsonl").write_text(text)
    changed = load_suite(root)
    with pytest.raises(EvalkitError, match="start a new run"):
        Runner(changed, load_system("baseline", changed), options(tmp_path)).run(resume=first.run_dir)


def test_out_dir_must_be_empty(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, n=2))
    out = tmp_path / "taken"
    out.mkdir()
    (out / "x").write_text("")
    with pytest.raises(EvalkitError, match="already holds files"):
        Runner(suite, load_system("baseline", suite), options(tmp_path, run_dir=out)).run()


def test_unknown_systems_are_clear_errors(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, n=2))
    for spec, needle in [
        ("gpt", "unknown system"),
        ("nope.module:fn", "cannot import module"),
        ("json:not_there", "has no function"),
        ("missing.py:predict", "not found"),
    ]:
        with pytest.raises(SystemLoadError, match=needle):
            load_system(spec, suite)


def test_judge_checks_without_a_judge_are_not_judged_and_not_scored(tmp_path: Path) -> None:
    suite = load_suite(make_suite(tmp_path, n=4, judge=True))
    outcome = Runner(suite, load_system("baseline", suite), options(tmp_path)).run()
    _, rows = read_run(outcome.run_dir)
    judged = rows.filter(pl.col("check_kind") == "judge")
    assert judged["status"].unique().to_list() == ["not_judged"]
    assert judged["skipped_reason"].str.starts_with("not judged").all()
    # a case whose cheap checks pass but whose judge did not run has no verdict yet
    assert set(rows["case_status"].unique().to_list()) == {"not_scored"}


def test_run_dir_reader_ignores_torn_lines(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    (tmp_path / "results.jsonl").write_text('{"broken": \n')
    assert run.read_journal() == []


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("support-triage", "support-triage"),
        ("team/triage v2", "team-triage-v2"),
        ("..", "suite"),
        ("ünï cödé", "ünï-cödé"),
    ],
)
def test_a_run_id_is_one_safe_folder_name_whatever_the_suite_is_called(name: str, slug: str) -> None:
    run_id = new_run_id(name)
    stamp, rest = run_id[:15], run_id[16:]
    assert stamp.replace("-", "").isdigit() and rest[:-5] == slug and len(rest[-4:]) == 4
    assert "/" not in run_id and not run_id.startswith(".")


def test_the_progress_bar_in_a_ci_log_is_drawn_at_the_start_and_the_end(tmp_path: Path) -> None:
    """Not a terminal: a redraw every 0.2 s would put one line per redraw in the log."""
    import os
    import subprocess
    import sys

    root = make_suite(tmp_path, n=40)
    (tmp_path / "slow.py").write_text(
        "import time\n\ndef predict(input):\n    time.sleep(0.05)\n    return {}\n"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    argv = [
        sys.executable,
        "-m",
        "evalkit.cli",
        "run",
        str(root),
        "--system",
        "slow:predict",
        "--concurrency",
        "1",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    drawn = [line for line in proc.stderr.replace("\r", "\n").splitlines() if "case/s" in line]
    assert len(drawn) == 2 and "0/40" in drawn[0] and "40/40" in drawn[-1], drawn


def test_a_system_that_calls_sys_exit_is_an_error_result_not_the_end_of_the_run(tmp_path: Path) -> None:
    import sys

    suite = load_suite(make_suite(tmp_path, n=6))

    def predict(case_input: dict[str, Any]) -> Any:
        if case_input["n"] == 3:
            sys.exit(0)
        return {"label": "even" if case_input["n"] % 2 == 0 else "odd"}

    outcome = Runner(suite, PythonSystem("exits", predict, "test"), options(tmp_path)).run()
    assert outcome.manifest.status == "complete"
    _, rows = read_run(outcome.run_dir)
    errors = rows.filter(pl.col("case_status") == "error")
    assert errors["case_id"].to_list() == ["c003"] and errors["case_error"][0].startswith("SystemExit")


def test_an_output_is_graded_as_it_is_recorded(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    case = {"id": "t", "input": 1, "checks": [{"kind": "exact", "expected": ["a", "b"]}]}
    keyed = {"id": "k", "input": 2, "checks": [{"kind": "exact", "expected": {"1": "one"}}]}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n" + json.dumps(keyed) + "\n")
    (root / "suite.toml").write_text('name = "shapes"\n')
    suite = load_suite(root)
    outputs = {1: ("a", "b"), 2: {1: "one"}}  # a tuple, and a dict with an int key
    system = PythonSystem("shapes", lambda i: outputs[i], "test")
    _, rows = read_run(Runner(suite, system, options(tmp_path)).run().run_dir)
    assert rows["status"].to_list() == ["pass", "pass"]


def test_finishing_keeps_only_this_runs_results(tmp_path: Path) -> None:
    """A line that is not a result, or one from another run, never replaces a case's result."""
    suite = load_suite(make_suite(tmp_path, n=6))
    first = Runner(suite, load_system("baseline", suite), options(tmp_path)).run()
    journal = first.run_dir / "results.jsonl"
    before = {json.loads(line)["case_id"]: line for line in journal.read_text().splitlines()}
    other = json.loads(before["c002"]) | {"run_id": "another-run", "case_id": "d000", "suite": "other"}
    with journal.open("a") as fh:
        fh.write(json.dumps({"case_id": "c005", "repeat": 0, "status": "passed"}) + "\n")
        fh.write(json.dumps(other) + "\n")
    again = Runner(suite, load_system("baseline", suite), options(tmp_path)).run(resume=first.run_dir)
    after = {json.loads(line)["case_id"]: line for line in journal.read_text().splitlines()}
    assert after == before
    _, rows = read_run(again.run_dir)
    assert sorted(rows["case_id"].unique()) == [f"c{i:03d}" for i in range(6)]


def test_a_run_being_run_cannot_be_resumed_at_the_same_time(tmp_path: Path) -> None:
    from evalkit._runner._start import lock_run_dir

    suite = load_suite(make_suite(tmp_path, n=4))
    first = Runner(suite, load_system("baseline", suite), options(tmp_path)).run()
    held = lock_run_dir(first.run_dir)  # as another process running it would hold it
    try:
        with pytest.raises(EvalkitError, match="being run by another evalkit process"):
            Runner(suite, load_system("baseline", suite), options(tmp_path)).run(resume=first.run_dir)
    finally:
        held.close()
    again = Runner(suite, load_system("baseline", suite), options(tmp_path)).run(resume=first.run_dir)
    assert again.manifest.status == "complete"


def test_a_run_that_fails_unexpectedly_is_marked_interrupted_with_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit._results import Journal

    suite = load_suite(make_suite(tmp_path, n=6))
    real = Journal.append
    count = [0]

    def disk_full(self: Journal, result: Any) -> None:
        count[0] += 1
        if count[0] == 3:
            raise OSError(28, "No space left on device")
        real(self, result)

    monkeypatch.setattr(Journal, "append", disk_full)
    with pytest.raises(EvalkitError, match=r"No space left on device.*evalkit run --resume"):
        Runner(suite, load_system("baseline", suite), options(tmp_path)).run()
    run_dir = next((tmp_path / "runs").iterdir())
    assert RunDir(run_dir).read_manifest().status == "interrupted"
    monkeypatch.undo()
    again = Runner(suite, load_system("baseline", suite), options(tmp_path)).run(resume=run_dir)
    assert again.manifest.status == "complete" and len(again.results) == 6


def test_the_summary_interval_is_clustered_by_case_over_repeats(tmp_path: Path) -> None:
    from evalkit._report import format_summary
    from evalkit.stats import case_verdicts, clustered_pass_rate

    suite = load_suite(make_suite(tmp_path, n=20))
    outcome = Runner(suite, load_system("baseline", suite), options(tmp_path, repeats=3)).run()
    manifest, rows = read_run(outcome.run_dir)
    r = clustered_pass_rate(case_verdicts(rows)).row(0, named=True)
    expected = f"95% CI {100 * r['ci_low']:.1f}%–{100 * r['ci_high']:.1f}%"
    assert expected in format_summary(manifest, rows)


def test_a_file_system_without_locks_runs_unguarded_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import fcntl

    def no_locks(*args: Any) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    suite = load_suite(make_suite(tmp_path, n=3))
    with pytest.warns(UserWarning, match="cannot lock .*No locks available"):
        outcome = Runner(suite, load_system("baseline", suite), options(tmp_path)).run()
    assert outcome.manifest.status == "complete"
