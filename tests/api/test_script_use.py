"""What a script sees: print(run) is the summary, print(suite) one line, grouped rates without a repeated column,
problems in reading order."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalkit as ek
from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_print_run_and_suite_and_grouped_rates(tmp_path: Path) -> None:
    suite = ek.load_suite(ROOT / "goldens" / "support-triage")
    shown = repr(suite)
    assert shown.startswith("Suite('support-triage', version ") and "159 cases" in shown and len(shown) < 500
    run = ek.run(suite, judge="off", runs_dir=tmp_path, progress=False)
    assert str(run) == run.summary(show_failures=5) and "pass rate" in str(run)
    by_slice = run.pass_rate(by="slice")
    assert (
        by_slice.columns[0] == "slice" and "group" not in by_slice.columns
    )  # was: group and slice, the same
    assert run.pass_rate().get_column("group").to_list() == ["all"]


def test_validate_lists_problems_line_by_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a1", "input": "x", "checks": [{"kind": "user", "name": "nope"}]}\n'
        '{"id": "a2", "input": "y", "grader": "nope"}\n'
    )
    assert main(["validate", str(bad)]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(str(bad))]
    # the unknown user check on line 1 is found by a check across cases, after line 2's: it is listed first
    assert [line.split(":")[1] for line in lines] == ["1", "2", "2"]


def test_the_run_card_says_which_model_answered(tmp_path: Path) -> None:
    from evalkit.testing import simulated_api

    with simulated_api():
        run = ek.run(ROOT / "goldens" / "refund-policy-qa", "baseline", judge="on", cache="off",
                     runs_dir=tmp_path, progress=False)  # fmt: skip
    assert "judge claude-opus-4-6 -&gt; simulated-judge" in run._repr_html_()  # as the CLI's summary says
