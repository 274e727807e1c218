"""`evalkit validate` on the command line: located messages, exit codes, nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]

# ten different faults, one per line (the first line is valid)
TEN_FAULTS = [
    json.dumps({"id": "ok-1", "input": "fine", "expected": "x", "grader": "exact"}),
    '{"id": "bad-json", "input": "oops",',  # 1 invalid JSON
    json.dumps({"input": "no id", "expected": "x", "grader": "exact"}),  # 2 missing id
    json.dumps({"id": "ok-1", "input": "dup", "expected": "x", "grader": "exact"}),  # 3 duplicate id
    json.dumps({"id": "g", "input": "q", "expected": "x", "grader": "fuzzy"}),  # 4 unknown grader
    json.dumps({"id": "k", "input": "q", "checks": [{"kind": "vibes"}]}),  # 5 unknown check
    json.dumps({"id": "m", "input": "q", "expected_exact": "a", "rubric": "b"}),  # 6 mixed blog keys
    json.dumps({"id": "r", "input": "q", "rubric": []}),  # 7 empty rubric
    json.dumps({"id": "f", "input": "q", "must_contain": []}),  # 8 empty fact list
    json.dumps({"id": "t", "input": "q", "checks": [{"kind": "max_words", "limit": "150"}]}),  # 9 wrong type
    json.dumps(
        {"id": "u", "input": "q", "expected": "x", "grader": "exact", "colour": "red"}
    ),  # 10 unknown key
]


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalkit.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_ten_faults_give_ten_located_messages_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "faulty.jsonl"
    path.write_text("\n".join(TEN_FAULTS) + "\n", encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run("validate", str(path))
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.startswith(str(path) + ":")]
    assert len(lines) == 10, proc.stderr
    located = sorted(int(line.split(":")[1]) for line in lines)
    assert located == list(range(2, 12))
    for needle in [
        "invalid JSON",
        "id: required",
        "duplicate id 'ok-1' (first used on line 1)",
        "unknown grader",
        "unknown check kind 'vibes'",
        "exactly one of",
        "rubric:",
        "must_contain:",
        "limit:",
        "colour: unknown key",
    ]:
        assert needle in proc.stderr, needle
    assert "nothing was written" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_valid_suite_prints_version_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "tiny.jsonl"
    rows = [
        {"id": "a", "input": "q", "expected": "x", "grader": "exact", "slice": "s1"},
        {"id": "b", "category": "s2", "input": "q", "must_contain": ["x"]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run("validate", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "2 cases" in proc.stdout and "s1 1, s2 1" in proc.stdout
    assert "version " in proc.stdout


def test_missing_path_and_no_arguments() -> None:
    proc = run("validate", "does/not/exist")
    assert proc.returncode == 2 and "not found" in proc.stderr
    assert run().returncode == 2
    assert "validate" in run("--help").stdout


def test_shipped_goldens_are_valid() -> None:
    proc = run("validate", "goldens/")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count(": ok") >= 1


def test_a_bad_suite_among_several_stops_the_run_before_any_suite_runs(tmp_path: Path) -> None:
    import shutil

    gold = tmp_path / "goldens"
    for name in ("reply-drafter", "support-triage"):
        shutil.copytree(ROOT / "goldens" / name, gold / name)
    broken = gold / "support-triage" / "cases.jsonl"  # runs after reply-drafter, in name order
    lines = broken.read_text(encoding="utf-8").count("\n")
    with broken.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "late", "input": \n')
    proc = run("run", str(gold), "--runs-dir", str(tmp_path / "runs"), "-q", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"{broken}:{lines + 1}: (json): invalid JSON" in proc.stderr
    assert "nothing was run" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "runs").exists() and proc.stdout == ""


def test_a_reader_that_goes_away_is_not_an_error() -> None:
    """`evalkit validate goldens/ | head -1`: the rest of the output has nowhere to go, and that is fine."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit.cli", "validate", "goldens/"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0 and "Traceback" not in err, err


def test_a_gate_that_cannot_judge_one_suite_does_not_stop_the_others(tmp_path: Path) -> None:
    boom = tmp_path / "boom.py"
    boom.write_text("def predict(input):\n    raise RuntimeError('down')\n")
    runs = tmp_path / "runs"
    proc = run(
        "run",
        "goldens/",
        "--system",
        f"{boom}:predict",
        "--judge",
        "off",
        "-q",
        "--gate",
        "--runs-dir",
        str(runs),
    )
    assert proc.returncode == 2, proc.stderr
    suites = sorted(p.name for p in (ROOT / "goldens").iterdir() if (p / "cases.jsonl").exists())
    assert len(list(runs.iterdir())) == len(suites)  # every suite ran
    assert proc.stdout.count("  gate: ") == len(suites) and "Traceback" not in proc.stderr


def test_a_file_system_given_by_another_path_is_the_same_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit._runner._resume import same_system

    (tmp_path / "pipe.py").write_text("def predict(input):\n    return input\n")
    monkeypatch.chdir(tmp_path)
    assert same_system("pipe.py:predict", f"{tmp_path}/pipe.py:predict")
    assert not same_system("pipe.py:other", f"{tmp_path}/pipe.py:predict")
    assert not same_system("claude", "baseline")


def test_a_default_system_file_given_from_the_suite_folder_is_the_same_system(tmp_path: Path) -> None:
    from evalkit._runner._resume import same_system

    suite = tmp_path / "suite"
    (suite / "sys").mkdir(parents=True)
    (suite / "sys" / "x.py").write_text("def predict(input):\n    return input\n")
    assert same_system("sys/x.py:predict", f"{suite}/sys/x.py:predict", suite)
    assert not same_system("sys/x.py:predict", f"{suite}/sys/x.py:predict", None) or Path.cwd() == suite


def test_user_text_cannot_drive_the_terminal(
    make_suite: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a slice name and an output holding escape sequences are shown as escapes, not acted on by the terminal
    cases = [
        {"id": "a", "input": "x\x1b[2J", "expected": "y", "grader": "exact", "slice": "evil\x1b[31m\u202e"}
    ]
    suite = make_suite(
        cases, name="esc", prompt=None, files={"baseline.py": "def predict(x):\n    return x\n"}
    )
    assert main(["run", str(suite), "--system", "baseline", "-q", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "evil\\x1b[31m\\u202e" in out and "\\x1b[2J" in out
