"""A calibration record says what it is: the model that answered (a simulated judge never calibrates Claude),
a digest over its content (an edited file is refused), the suite it belongs to, values within their domain;
hostile or newer files are refused with the file named, and an old record still loads and says what it lacks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import evalkit as ek
from evalkit.calibration import (
    CalibrationRecord,
    calibration_state,
    read_calibration_record,
    write_calibration_record,
)
from evalkit.calibration._record import current_judge
from evalkit.errors import EvalkitError

ROOT = Path(__file__).resolve().parents[2]
RPQ = ROOT / "goldens" / "refund-policy-qa"


@pytest.fixture
def suite(tmp_path: Path) -> ek.Suite:
    folder = tmp_path / "rpq"
    shutil.copytree(RPQ, folder, ignore=shutil.ignore_patterns("labels"))
    toml = (folder / "suite.toml").read_text(encoding="utf-8")
    (folder / "suite.toml").write_text(toml.replace("[judge]", "[judge]\nmin_kappa = 0.5", 1))
    (folder / "labels").mkdir()
    return ek.load_suite(folder)


def _record(of: ek.Suite, **update: Any) -> CalibrationRecord:
    judge = current_judge(of)
    fields: dict[str, Any] = {
        "format_version": 2,
        "suite": of.name,
        "suite_version": of.version,
        "judge_model": judge["model"],
        "answered_by": ["claude-opus-4-6"],
        "prompt": judge["prompt"],
        "prompt_hash": judge["prompt_hash"],
        "pass_rule": judge["pass_rule"],
        "kappa": 0.8,
        "check": "faithfulness",
        "checks": {"faithfulness": {"kappa": 0.8, "kappa_ci": [0.6, 0.9], "n": 40, "missing": {}}},
        "n": 40,
        "verdicts_extra": 0,
        "stale": 0,
        "labels": None,
        "run_id": "r1",
        "date": "2026-01-01",
        "seed": 0,
    }
    return CalibrationRecord.model_validate(fields | update)


def _path(suite: ek.Suite) -> Path:
    return Path(suite.base_dir) / "labels" / "calibration.json"


def _raw(suite: ek.Suite, data: dict[str, Any] | str) -> Path:
    """Write the record file as given, with no digest (as a hand, or an older evalkit, would)."""
    path = _path(suite)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_a_record_of_claude_that_answered_is_calibrated(suite: ek.Suite) -> None:
    write_calibration_record(_record(suite), _path(suite))
    state = calibration_state(suite)
    assert state.state == "calibrated", state.reason
    assert "not recorded" not in state.reason


def test_a_record_measured_against_the_simulated_judge_is_not_calibrated_for_claude(suite: ek.Suite) -> None:
    write_calibration_record(_record(suite, answered_by=["simulated-judge"]), _path(suite))
    state = calibration_state(suite)
    assert state.state == "uncalibrated"
    assert "simulated-judge" in state.reason and "claude-opus-4-6" in state.reason


def test_an_edited_record_is_named_as_edited_and_not_trusted(suite: ek.Suite) -> None:
    path = write_calibration_record(_record(suite, kappa=0.3, answered_by=["claude-opus-4-6"]), _path(suite))
    assert calibration_state(suite).state == "uncalibrated"  # 0.3 < 0.5
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["digest"].startswith("sha256:")
    data["kappa"] = 0.9
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    state = calibration_state(suite)
    assert state.state == "uncalibrated" and state.record_ignored
    assert "edited" in state.reason and str(path) in state.reason
    with pytest.raises(EvalkitError, match="edited"):
        read_calibration_record(path)


def test_another_suites_record_is_refused(suite: ek.Suite) -> None:
    write_calibration_record(_record(suite, suite="reply-drafter"), _path(suite))
    state = calibration_state(suite)
    assert state.state == "uncalibrated"
    assert "'reply-drafter'" in state.reason and repr(suite.name) in state.reason


@pytest.mark.parametrize(
    ("update", "where"),
    [
        ({"kappa": 5.0}, "kappa"),
        (
            {"checks": {"faithfulness": {"kappa": 0.8, "kappa_ci": [0.6, 1.7], "n": 40, "missing": {}}}},
            "kappa_ci",
        ),
        ({"n": -3}, "n"),
        (
            {"checks": {"faithfulness": {"kappa": 0.8, "kappa_ci": None, "n": 4, "missing": {"x": -1}}}},
            "missing",
        ),
    ],
)
def test_values_outside_their_domain_are_refused_and_located(
    suite: ek.Suite, update: dict[str, Any], where: str
) -> None:
    data = _record(suite).model_dump(mode="json") | update
    path = _raw(suite, data)
    with pytest.raises(EvalkitError) as err:
        read_calibration_record(path)
    assert str(path) in str(err.value) and where in str(err.value)
    state = calibration_state(suite)
    assert state.state == "uncalibrated" and "refused" in state.reason


def test_a_record_naming_a_check_it_has_no_kappa_for_is_stale_not_a_crash(
    suite: ek.Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _record(suite).model_dump(mode="json") | {"check": "nope"}
    _raw(suite, data)
    state = calibration_state(suite)
    assert state.state == "stale" and "'nope'" in state.reason and state.record_ignored


def test_an_old_record_loads_and_says_what_it_lacks(suite: ek.Suite) -> None:
    data = _record(suite).model_dump(mode="json")
    for key in ("format_version", "answered_by"):
        data.pop(key)
    path = _raw(suite, data)
    record = read_calibration_record(path)
    assert record is not None and record.answered_by is None and record.format_version == 1
    state = calibration_state(suite)
    assert state.state == "calibrated"
    assert "answered-by model not recorded: re-run calibrate" in state.reason


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '{"format_version": 99, "suite": "x"}',
            "written by a newer evalkit (format 99; this evalkit reads up to 2)",
        ),
        ('{"kappa": 1, "kappa": 0.2}', "appears twice"),
        ('{"seed": ' + "9" * 5000 + "}", "too long"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"suite": "\\ud800"}', "not a calibration record"),
        ('{"suite": ', "line 1"),
    ],
    ids=["newer", "duplicate-key", "5000-digits", "deep", "lone-surrogate", "torn"],
)
def test_hostile_or_newer_records_are_refused_with_the_file_named(
    suite: ek.Suite, text: str, said: str
) -> None:
    path = _raw(suite, text)
    with pytest.raises(EvalkitError) as err:
        read_calibration_record(path)
    assert str(path) in str(err.value) and said in str(err.value)


def test_verdicts_judged_at_calibration_time_name_the_model_that_gave_them(
    tmp_path: Path, make_anthropic_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--judge-all against evalkit serve's simulated judge: the record says so, and calibrates nothing."""
    from evalkit._client import Client
    from evalkit.calibration import calibrate, calibration_record
    from evalkit.testing.server import SimulatedJudge

    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    run = ek.run(
        RPQ, "baseline", judge="off", runs_dir=tmp_path / "runs", cache_dir=tmp_path / "c", progress=False
    )
    server = make_anthropic_server(judge=SimulatedJudge())
    client = Client(base_url=server.base_url, api_key="test", max_retries=0)
    try:
        c = calibrate(run, RPQ / "labels" / "baseline.jsonl", judge_all=True, client=client, n_boot=20)
    finally:
        client.close()
    assert c.verdicts_extra > 0
    record = calibration_record(c)
    assert record.judge_model == "claude-opus-4-6" and record.answered_by == ["simulated-judge"]
