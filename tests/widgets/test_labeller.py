"""The labeller, driven as its front end drives it: every action lands in the labels file at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

import evalkit as ek
from evalkit.calibration import LabelItem, label_items, read_labels
from evalkit.widgets import Labeller

ROOT = Path(__file__).resolve().parents[2]
RPQ = ROOT / "goldens" / "refund-policy-qa"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ek.Run:
    return ek.run(RPQ, "baseline", judge="off", runs_dir=tmp_path_factory.mktemp("runs"), progress=False)


def _press(widget: Labeller, action: str, **more: object) -> None:
    """What the front end sends for a key press or a click."""
    widget._handle_custom_msg({"action": action, **more}, [])


def test_items_are_every_judged_output_even_where_the_judge_did_not_run(run: ek.Run) -> None:
    items = label_items(run.checks(), run.suite)
    judged = [(c.id, ch.label) for c in run.suite.cases for ch in c.checks if ch.kind == "judge"]
    assert [(it.case_id, it.check) for it in items] == judged
    assert all(it.rubric and it.output is not None for it in items)
    assert all(it.judge_passed is None for it in items)  # --judge off: nothing judged, all still labellable


def test_each_action_is_saved_and_reopening_resumes(run: ek.Run, tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    items = label_items(run.checks(), run.suite)
    w = Labeller(items, path, rater="ana")
    assert (w.index, w.labelled, w.total) == (0, 0, len(items))
    _press(w, "toggle", criterion=0)
    saved = read_labels(path)
    assert len(saved) == 1 and saved[0].criteria[0].met is True and saved[0].passed is None
    _press(w, "pass")
    assert read_labels(path)[0].passed is True and w.index == 1 and w.labelled == 1
    _press(w, "fail")
    _press(w, "back")
    _press(w, "reason", text="cites a chunk that was not retrieved")
    third = read_labels(path)
    assert [lab.passed for lab in third] == [True, False]
    assert third[1].reason == "cites a chunk that was not retrieved" and third[1].rater == "ana"
    assert third[1].output_hash == items[1].output_hash
    _press(w, "next")
    _press(w, "skip")
    assert read_labels(path)[2].skipped is True and w.labelled == 3
    # no temp file is left beside the labels, and every line is one JSON object
    assert [p.name for p in tmp_path.iterdir()] == ["labels.jsonl"]
    assert all(json.loads(line) for line in path.read_text().splitlines())
    again = Labeller(items, path, rater="ana")
    assert again.index == 3 and again.labelled == 3
    # another rater starts from the beginning of the same file and keeps the first rater's labels
    other = Labeller(items, path, rater="ben")
    assert other.index == 0 and other.labelled == 0
    _press(other, "fail")
    assert sorted({lab.rater for lab in read_labels(path)}) == ["ana", "ben"]


def test_toggle_cycles_and_unknown_actions_are_said(run: ek.Run, tmp_path: Path) -> None:
    items = label_items(run.checks(), run.suite)
    w = Labeller(items, tmp_path / "l.jsonl", rater="ana")
    for expected in (True, False, None):
        _press(w, "toggle", criterion=1)
        assert w.label["criteria"][1] is expected
    _press(w, "toggle", criterion=99)  # out of range: ignored, nothing saved beyond the toggles
    _press(w, "dance")
    assert "unknown action" in w.message


def test_running_kappa_appears_once_enough_labels_exist(tmp_path: Path) -> None:
    judge = [True, True, False, True, False, False, True, True, False, True, True, False]
    human = [True, False, False, True, False, True, True, True, False, True, False, False]
    items = [
        LabelItem(f"c{i}", "q", f"h{i}", "s", {"q": i}, f"answer {i}", ["ok"], judge_passed=j)
        for i, j in enumerate(judge)
    ]
    w = Labeller(items, tmp_path / "k.jsonl", rater="ana", min_for_kappa=10)
    for i, h in enumerate(human):
        assert ("kappa after" in w.kappa) == (i < 10)
        _press(w, "pass" if h else "fail")
    expected = cohen_kappa_score(human, judge)
    assert w.kappa == f"judge vs you: kappa {expected:.2f} on {len(human)} (rough: fewer than 100 labels)"


def test_running_kappa_is_undefined_when_the_judge_gives_one_label_only(tmp_path: Path) -> None:
    # issue 23: a judge that fails everything showed kappa 0.00, as if it agreed by chance
    human = [True, False, False, True, False, True, True, True, False, True, False, False]
    items = [
        LabelItem(f"c{i}", "q", f"h{i}", "s", {"q": i}, f"answer {i}", ["ok"], judge_passed=False)
        for i in range(len(human))
    ]
    w = Labeller(items, tmp_path / "k.jsonl", rater="ana", min_for_kappa=10)
    for h in human:
        _press(w, "pass" if h else "fail")
    assert w.kappa == f"judge vs you: kappa undefined on {len(human)} (the judge gave one label only)"


def test_a_failed_save_is_shown_not_swallowed(tmp_path: Path) -> None:
    items = [LabelItem("c0", "q", "h0", "s", {}, "a", ["ok"])]
    target = tmp_path / "labels.jsonl"
    w = Labeller(items, target, rater="ana")
    target.mkdir()  # the labels path is now a folder: the atomic replace must fail
    _press(w, "pass")
    assert w.message.startswith("NOT SAVED")
