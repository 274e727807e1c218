"""The shipped golden suites keep their promises: size, slices, adversarial share, and labels that match outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit._hashing import output_hash
from evalkit._systems import load_system
from evalkit.suite import JudgeCheck, load_suite

GOLDENS = Path(__file__).resolve().parents[2] / "goldens"
MINIMUM = {"support-triage": 100, "invoice-extraction": 60, "refund-policy-qa": 60, "reply-drafter": 40}
HARD_TAGS = {"adversarial", "hedge", "refuse", "injection", "prompt-injection"}


@pytest.mark.parametrize("name", sorted(MINIMUM))
def test_suite_size_slices_and_hard_cases(name: str) -> None:
    suite = load_suite(GOLDENS / name)
    assert len(suite.cases) >= MINIMUM[name]
    assert len(suite.slice_counts()) >= 5
    hard = [c for c in suite.cases if HARD_TAGS & set(c.tags)]
    assert len(hard) >= 0.10 * len(suite.cases)
    assert all(c.source and c.source.startswith("synthetic") for c in suite.cases)
    holdout = sum(c.split == "holdout" for c in suite.cases)
    assert 0.1 * len(suite.cases) <= holdout <= 0.3 * len(suite.cases)
    assert (GOLDENS / name / "prompt.md").exists() and (GOLDENS / name / "baseline.json").exists()


@pytest.mark.parametrize("name", ["refund-policy-qa", "reply-drafter"])
def test_reference_labels_judge_the_current_baseline_outputs(name: str) -> None:
    """A label is about one output: if the baseline changes, its labels must be written again."""
    suite = load_suite(GOLDENS / name)
    predict = load_system("baseline", suite).fn  # type: ignore[union-attr]
    labels = [
        json.loads(line) for line in (GOLDENS / name / "labels" / "baseline.jsonl").read_text().splitlines()
    ]
    by_case = {c.id: c for c in suite.cases}
    judged = {(c.id, chk.name) for c in suite.cases for chk in c.checks if isinstance(chk, JudgeCheck)}
    assert {(label["case_id"], label["check"]) for label in labels} == judged
    for label in labels:
        case = by_case[label["case_id"]]
        assert label["output_hash"] == output_hash(predict(case.input)), label["case_id"]
        check = next(c for c in case.checks if isinstance(c, JudgeCheck) and c.name == label["check"])
        assert [c["criterion"] for c in label["criteria"]] == list(check.rubric)
        assert label["passed"] == all(c["met"] for c in label["criteria"])
        assert label["rater"] and label["date"] and label["reason"]
