"""A labels file is a log of actions: two labellers on one file, killed saves and compaction lose nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from evalkit.calibration import Label, read_labels
from evalkit.calibration._labels import LabelsFile


def _label(i: int, rater: str, passed: bool = True) -> Label:
    return Label(
        case_id=f"c{i:03d}", check="faithfulness", output_hash=f"h{i:03d}", rater=rater, passed=passed
    )


def test_two_raters_in_two_labellers_on_one_file_keep_every_label(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    ana, bob = LabelsFile(path, rater="ana"), LabelsFile(path, rater="bob")
    for i in range(5):  # interleaved, each holding its own copy, as two notebooks do
        ana.put(_label(i, "ana"))
        bob.put(_label(i, "bob", passed=False))
    saved = read_labels(path)
    assert sorted((lab.rater, lab.case_id) for lab in saved) == sorted(
        [("ana", f"c{i:03d}") for i in range(5)] + [("bob", f"c{i:03d}") for i in range(5)]
    )


def test_one_rater_in_two_notebooks_keeps_every_action_and_the_last_wins(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    first, second = LabelsFile(path, rater="ana"), LabelsFile(path, rater="ana")
    for i in range(4):
        first.put(_label(i, "ana"))
        second.put(_label(i + 4, "ana"))
    second.put(_label(0, "ana", passed=False))  # a later action on the same output replaces the earlier
    saved = {lab.case_id: lab.passed for lab in read_labels(path)}
    assert len(saved) == 8 and saved["c000"] is False and saved["c001"] is True


def test_a_save_killed_mid_line_loses_only_itself(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    book = LabelsFile(path, rater="ana")
    for i in range(3):
        book.put(_label(i, "ana"))
    with path.open("ab") as fh:
        fh.write(b'{"case_id": "c009", "check": "faith')  # the kill came mid-write
    reopened = LabelsFile(path, rater="ana")  # opens: the torn tail is cut off
    assert len(reopened.labels()) == 3
    reopened.put(_label(3, "ana"))
    assert [lab.case_id for lab in read_labels(path)] == ["c000", "c001", "c002", "c003"]


def test_compaction_keeps_every_raters_latest_label(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    ana, bob = LabelsFile(path, rater="ana"), LabelsFile(path, rater="bob")
    bob.put(_label(0, "bob"))
    for round_ in range(120):  # 240 actions on 2 outputs: the file is compacted on the way
        ana.put(_label(round_ % 2, "ana", passed=round_ % 3 == 0))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 240
    saved = {(lab.rater, lab.case_id): lab.passed for lab in read_labels(path)}
    assert saved == {("bob", "c000"): True, ("ana", "c000"): 118 % 3 == 0, ("ana", "c001"): 119 % 3 == 0}


def test_two_processes_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    code = (
        "import sys\n"
        "from evalkit.calibration import Label\n"
        "from evalkit.calibration._labels import LabelsFile\n"
        "book = LabelsFile(sys.argv[1], rater=sys.argv[2])\n"
        "for i in range(150):\n"
        "    book.put(Label(case_id=f'c{i:03d}', check='k', output_hash='h', rater=sys.argv[2], passed=True))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), rater]) for rater in ("ana", "bob")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    saved = read_labels(path)
    assert len(saved) == 300 and {lab.rater for lab in saved} == {"ana", "bob"}
