"""`evalkit init NAME`: a suite that validates and runs as written, offline and with a (simulated) judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit import api
from evalkit.cli import main
from evalkit.testing import simulated_api


def test_init_makes_a_suite_that_validates_and_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "review-replies"
    assert main(["init", "review-replies", "--dir", str(folder)]) == 0
    assert "next: evalkit run" in capsys.readouterr().out
    assert sorted(p.name for p in folder.iterdir()) == [
        "baseline.py", "cases.jsonl", "checks.py", "prompt.md", "suite.toml"
    ]  # fmt: skip
    rows = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    # one case of each form: one grader, one expectation, checks (code, user and judge)
    assert "grader" in rows[0] and "must_contain" in rows[1]
    assert {c["kind"] for c in rows[2]["checks"]} >= {"contains_none", "user", "judge"}
    assert main(["validate", str(folder)]) == 0
    offline = api.run(folder, judge="off", runs_dir=tmp_path / "runs", progress=False)
    assert offline.status == "complete" and offline.errored_cases == 0
    with simulated_api():  # the judge check runs too, and passes on the baseline's reply
        judged = api.run(folder, judge="on", runs_dir=tmp_path / "runs", cache="off", progress=False)
    verdicts = judged.checks().filter(judged.checks()["check_kind"] == "judge")
    assert verdicts.height == 1 and verdicts["judge_model_version"].to_list() == ["simulated-judge"]
    assert verdicts["status"].to_list()[0] in ("pass", "fail")


def test_init_never_writes_into_an_existing_folder_or_takes_a_bad_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "cases.jsonl").write_text("precious\n")
    assert main(["init", "mine", "--dir", str(folder)]) == 2
    assert "exists; nothing was written" in capsys.readouterr().err
    assert (folder / "cases.jsonl").read_text() == "precious\n" and len(list(folder.iterdir())) == 1
    assert main(["init", "../escape", "--dir", str(tmp_path / "x")]) == 2
    assert "is not a suite name" in capsys.readouterr().err and not (tmp_path / "x").exists()
