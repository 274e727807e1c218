"""Calibration of a run against human labels: the join (stale labels apart), the figures checked against
scikit-learn, judging every labelled output through the local server, the corrected pass rate and the record."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

import evalkit as ek
from evalkit._client import Client
from evalkit.calibration import (
    Label,
    calibrate,
    calibration_record,
    calibration_state,
    corrected_pass_rate,
    format_calibration,
    labels_to_ratings,
    read_calibration_record,
    read_labels,
    write_calibration_record,
    write_labels,
)
from evalkit.errors import EvalkitError
from evalkit.testing import LocalAnthropicServer, Reply
from evalkit.testing.server import last_user_text

ROOT = Path(__file__).resolve().parents[2]
RPQ = ROOT / "goldens" / "refund-policy-qa"
LABELS = RPQ / "labels" / "baseline.jsonl"
DRAFTER_LABELS = ROOT / "goldens" / "reply-drafter" / "labels" / "baseline.jsonl"


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> ek.Run:
    folder = tmp_path_factory.mktemp("runs")
    return ek.run(RPQ, "baseline", judge="off", runs_dir=folder, cache_dir=folder / "cache", progress=False)


def rubric_judge(met_when: Callable[[str], bool]) -> Callable[[dict[str, Any]], Reply]:
    """A responder giving a valid rubric verdict for whatever rubric it receives; every criterion is met when
    `met_when(candidate text)`."""

    def respond(body: dict[str, Any]) -> Reply:
        text = last_user_text(body)
        rubric = re.search(r"<rubric[^>]*>\n(.*?)\n</rubric", text, flags=re.DOTALL)
        assert rubric, "no rubric in the judge prompt"
        criteria = [re.sub(r"^\d+\. ", "", line) for line in rubric.group(1).splitlines()]
        candidate = re.search(r"<candidate_output[^>]*>\n(.*?)\n</candidate_output", text, flags=re.DOTALL)
        met = met_when(candidate.group(1) if candidate else "")
        return Reply(
            data={
                "criteria": [{"criterion": c, "met": met, "evidence": ""} for c in criteria],
                "score": 4 if met else 2,
                "passed": met,
                "reasoning": f"simulated: {'met' if met else 'not met'}",
            }
        )

    return respond


def _cites(text: str) -> bool:
    return "[" in text  # a stand-in judge: passes an answer that cites a chunk


# ---- the shipped labels --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "count"), [(LABELS, 78), (DRAFTER_LABELS, 51)])
def test_shipped_labels_read_and_convert_losslessly(path: Path, count: int, tmp_path: Path) -> None:
    labels = read_labels(path)
    assert len(labels) == count
    ratings = labels_to_ratings(labels)
    assert len(ratings) == count + sum(len(lab.criteria) for lab in labels)
    overall = [r for r in ratings if "criterion" not in r]
    assert [r["value"] for r in overall] == [lab.passed for lab in labels]
    assert sum(r.get("reason") is not None for r in overall) == sum(bool(lab.reason) for lab in labels)
    again = read_labels(write_labels(tmp_path / "again.jsonl", labels))
    assert again == labels


# ---- the join --------------------------------------------------------------------------------------------------


def test_offline_every_label_joins_and_the_judge_column_is_empty(run: ek.Run) -> None:
    c = calibrate(run, LABELS, n_boot=200)
    assert (c.labels, c.joined, len(c.stale), len(c.unmatched)) == (78, 78, 0, 0)
    assert (c.verdicts_from_run, c.verdicts_extra, c.no_verdict) == (0, 0, 78)
    judge = c.comparison("faithfulness")
    assert judge is not None and judge.overall.n == 0 and judge.overall.cohen_kappa is None
    assert judge.overall.missing == {"human": 0, "machine": 78}
    assert "no verdict to compare; --judge-all judges them" in format_calibration(c)


def test_a_label_of_a_changed_output_is_stale_never_joined(run: ek.Run, tmp_path: Path) -> None:
    labels = read_labels(LABELS)
    labels[0] = labels[0].model_copy(update={"output_hash": "0000000000000000"})
    labels.append(labels[1].model_copy(update={"case_id": "rpq-999"}))
    c = calibrate(run, write_labels(tmp_path / "l.jsonl", labels), n_boot=50)
    assert c.joined == 77 and len(c.unmatched) == 1 and "rpq-999 is not in this run" in c.unmatched[0].why
    (stale,) = c.stale
    assert stale.case_id == labels[0].case_id and stale.label_hash == "0000000000000000"
    assert stale.run_hashes and stale.run_hashes[0] != "0000000000000000"
    assert labels[0].case_id not in {i["case_id"] for i in c.items}
    assert f"stale: {labels[0].case_id} / faithfulness" in format_calibration(c)


def test_code_check_figures_match_scikit_learn(run: ek.Run) -> None:
    c = calibrate(run, LABELS, n_boot=200)
    human = {i["case_id"]: i["human"] for i in c.items}
    rows = run.checks().filter(run.checks()["check_name"] == "facts")
    facts = dict(zip(rows["case_id"].to_list(), rows["passed"].to_list(), strict=True))
    ids = sorted(human)
    h, m = [human[i] for i in ids], [facts[i] for i in ids]
    comp = c.comparison("facts")
    assert comp is not None and comp.kind == "code" and comp.overall.n == 78
    assert comp.overall.cohen_kappa == pytest.approx(cohen_kappa_score(h, m), abs=1e-12)
    assert comp.overall.confusion.counts == confusion_matrix(h, m, labels=[False, True]).tolist()
    lo, hi = comp.overall.cohen_kappa_ci or (0, 0)
    assert lo < comp.overall.cohen_kappa < hi
    failed = [mm for hh, mm in zip(h, m, strict=True) if not hh]
    passed = [mm for hh, mm in zip(h, m, strict=True) if hh]
    rates = comp.overall.rates
    assert rates is not None
    assert rates.coverage == pytest.approx(sum(not x for x in failed) / len(failed))
    assert rates.false_failure_rate == pytest.approx(sum(not x for x in passed) / len(passed))
    assert sum(f.n for f in comp.by_slice) == 78
    wrong = {d.case_id for d in c.disagreements if d.machine == "facts"}
    assert wrong == {i for i in ids if human[i] != facts[i]}


def test_by_date_splits_the_labels_by_their_date(run: ek.Run, tmp_path: Path) -> None:
    labels = [
        lab.model_copy(update={"date": "2026-11-01" if i % 2 else "2026-12-01"})
        for i, lab in enumerate(read_labels(LABELS))
    ]
    c = calibrate(run, write_labels(tmp_path / "dated.jsonl", labels), by_date=True, n_boot=50)
    comp = c.comparison("facts")
    assert comp is not None
    assert [(f.group, f.n) for f in comp.by_date] == [("2026-11-01", 39), ("2026-12-01", 39)]


# ---- judging every labelled output -----------------------------------------------------------------------------


def test_judge_all_judges_what_the_cascade_skipped_through_the_cache(
    run: ek.Run, make_anthropic_server: Callable[..., LocalAnthropicServer], tmp_path: Path
) -> None:
    server = make_anthropic_server(rubric_judge(_cites))
    client = Client(base_url=server.base_url, api_key="test", max_retries=0)
    c = calibrate(run, LABELS, judge_all=True, client=client, cache_dir=tmp_path / "judge-cache", n_boot=200)
    assert (c.verdicts_from_run, c.verdicts_extra, c.no_verdict, c.extra_errors) == (0, 78, 0, [])
    assert len(server.requests_to("/v1/messages", "POST")) == 78
    assert all(i["judge_source"] == "extra" for i in c.items)
    assert c.judge is not None and c.judge["model"] == "claude-opus-4-6" and c.judge["prompt_hash"]
    outputs = {r["case_id"]: json.loads(r["output"]) for r in run.checks().iter_rows(named=True)}
    expected = {i["case_id"]: _cites(outputs[i["case_id"]]) for i in c.items}
    assert {i["case_id"]: i["judge"] for i in c.items} == expected
    h = [i["human"] for i in c.items]
    j = [i["judge"] for i in c.items]
    comp = c.comparison("faithfulness")
    assert comp is not None and comp.overall.cohen_kappa == pytest.approx(cohen_kappa_score(h, j), abs=1e-12)
    criteria = {f.group: f for f in comp.by_criterion}
    assert criteria["Every claim is supported by the cited chunks"].n == 66
    assert "78 judged now for calibration (--judge-all)" in format_calibration(c)
    # the same outputs again: every verdict comes from the response cache, no request is made
    server.clear_log()
    again = calibrate(
        run, LABELS, judge_all=True, client=client, cache_dir=tmp_path / "judge-cache", n_boot=200
    )
    assert server.requests_to("/v1/messages", "POST") == []
    assert again.comparison("faithfulness") == comp
    client.close()


def test_judge_all_keeps_going_past_an_output_the_judge_cannot_grade(
    run: ek.Run, make_anthropic_server: Callable[..., LocalAnthropicServer], tmp_path: Path
) -> None:
    good = rubric_judge(_cites)

    def flaky(body: dict[str, Any]) -> Reply:
        if "rpq-001" in json.dumps(body) or "change my mind" in last_user_text(body):
            return Reply(data={"nonsense": True})
        return good(body)

    server = make_anthropic_server(flaky)
    client = Client(base_url=server.base_url, api_key="test", max_retries=0)
    c = calibrate(run, LABELS, judge_all=True, client=client, cache_dir=tmp_path / "c", n_boot=20)
    assert c.verdicts_extra == 77 and c.no_verdict == 1
    assert len(c.extra_errors) == 1 and c.extra_errors[0].startswith("rpq-001 / faithfulness: JudgeError")
    client.close()


# ---- the corrected pass rate ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> ek.Run:
    folder = tmp_path_factory.mktemp("judged")
    with LocalAnthropicServer(rubric_judge(_cites)) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_BASE_URL", server.base_url)
        mp.setenv("ANTHROPIC_API_KEY", "test")
        return ek.run(
            RPQ, "baseline", judge="on", runs_dir=folder, cache_dir=folder / "cache", progress=False
        )


def test_corrected_pass_rate_uses_the_cascade_verdict_on_every_case(
    judged_run: ek.Run, tmp_path: Path
) -> None:
    rows = judged_run.checks().filter(judged_run.checks()["check_name"] == "faithfulness")
    assert (
        rows.filter(rows["status"] != "skipped").height == 16
    )  # the judge ran where the cheaper checks passed
    labels = read_labels(LABELS)
    some = write_labels(tmp_path / "half.jsonl", labels[::2])
    est = corrected_pass_rate(judged_run, some)
    verdict = {
        r["case_id"]: bool(r["passed"]) if r["status"] in ("pass", "fail") else False
        for r in rows.iter_rows(named=True)
    }
    assert (est.n_labelled, est.n_unlabelled) == (39, 39)
    assert est.judge_only_rate == pytest.approx(sum(verdict.values()) / 78)
    assert est.human_only_rate == pytest.approx(sum(bool(lab.passed) for lab in labels[::2]) / 39)
    assert est.ci_low <= est.rate <= est.ci_high
    c = calibrate(judged_run, some, n_boot=50)
    assert c.corrected["faithfulness"] == est
    assert "corrected (PPI++" in format_calibration(c)
    with pytest.raises(EvalkitError, match="every output of 'faithfulness' is labelled"):
        corrected_pass_rate(judged_run, LABELS)


# ---- the record and the state -----------------------------------------------------------------------------------


def _suite_copy(tmp_path: Path, judge_lines: str) -> Path:
    folder = tmp_path / "suite"
    shutil.copytree(RPQ, folder, ignore=shutil.ignore_patterns("labels"))
    toml = (folder / "suite.toml").read_text(encoding="utf-8")
    (folder / "suite.toml").write_text(toml.replace('[judge]\nmodel = "claude-opus-4-6"', judge_lines))
    return folder


def test_calibration_state_follows_the_record_and_min_kappa(judged_run: ek.Run, tmp_path: Path) -> None:
    c = calibrate(judged_run, LABELS, n_boot=100)
    record = calibration_record(c)
    assert record.judge_model == "claude-opus-4-6" and record.check == "faithfulness"
    assert record.kappa == c.comparisons[0].overall.cohen_kappa and record.n == 16
    loose = ek.load_suite(_suite_copy(tmp_path / "a", '[judge]\nmodel = "claude-opus-4-6"\nmin_kappa = -1'))
    assert calibration_state(loose).state == "uncalibrated"  # no record yet
    path = write_calibration_record(c, Path(loose.base_dir) / "labels" / "calibration.json")
    assert read_calibration_record(path) == record
    state = calibration_state(loose)
    assert state.state == "calibrated" and state.kappa == record.kappa and "on 16" in state.reason
    strict = ek.load_suite(_suite_copy(tmp_path / "b", '[judge]\nmodel = "claude-opus-4-6"\nmin_kappa = 1'))
    assert calibration_state(strict, record=path).state == (
        "calibrated" if record.kappa == 1 else "uncalibrated"
    )
    other = ek.load_suite(_suite_copy(tmp_path / "c", '[judge]\nmodel = "claude-haiku-4-5"\nmin_kappa = 0.1'))
    stale = calibration_state(other, record=path)
    assert stale.state == "stale" and "claude-opus-4-6" in stale.reason and "claude-haiku-4-5" in stale.reason
    none = calibration_state(ek.load_suite(RPQ), record=path)
    assert none.state == "not required" and "min_kappa" in none.reason
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(EvalkitError, match=r"bad\.json: not a calibration record"):
        read_calibration_record(bad)
    refused = calibration_state(loose, record=bad)  # a record that cannot vouch is said, not raised
    assert refused.state == "uncalibrated" and "bad.json: not a calibration record" in refused.reason


def test_labels_named_by_a_label_model_are_checked(tmp_path: Path) -> None:
    lab = Label(case_id="x", check="faithfulness", output_hash="h", rater="r", passed=True)
    assert read_labels(write_labels(tmp_path / "x.jsonl", [lab])) == [lab]
