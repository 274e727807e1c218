"""One gate: `evalkit gate`, `evalkit.api.gate` and `Run.gate` give the same exit code, the same text and the same
JUnit file on every case the gate tests cover, and the same error where the gate cannot judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from gated_suite import JUDGED, N, case, run, write_suite
from synthetic_runs import BASE, make_run

from evalkit._baseline import accept
from evalkit._gate import GateOutcome, GateVerdict
from evalkit.api import Run, gate
from evalkit.calibration import CalibrationRecord
from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.graders import load_template
from evalkit.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
V = GateVerdict


def command(run: Path, baseline: Path, options: dict[str, Any]) -> list[str]:
    """`evalkit gate` with the options spelled as flags."""
    args = ["gate", str(run), "--baseline", str(baseline)]
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is not False:
            args += [flag, str(value)]
    return args


def _junit(options: dict[str, Any]) -> str | None:
    """The JUnit file the last gate wrote (removed, so the next gate must write its own)."""
    if options.get("junit") is None:
        return None
    path = Path(options["junit"])
    text = path.read_text(encoding="utf-8")
    path.unlink()
    return text


def same_gate(capsys: pytest.CaptureFixture[str], run: Path, baseline: Path, **options: Any) -> GateOutcome:
    """Gate through the command, `evalkit.api.gate` and `Run.gate`; assert all three agree; the api's outcome."""
    code = main(command(run, baseline, options))
    printed = capsys.readouterr()
    junit = _junit(options)
    outcome = gate(run, baseline, **options)
    junit_api = _junit(options)
    method = Run(run).gate(baseline, **options)
    junit_method = _junit(options)
    assert printed.err == ""
    assert code == outcome.exit_code == method.exit_code
    assert printed.out == outcome.text + "\n" == method.text + "\n"
    assert outcome.decision == method.decision
    assert junit == junit_api == junit_method
    return outcome


def same_error(capsys: pytest.CaptureFixture[str], run: Path, baseline: Path, **options: Any) -> str:
    """The command exits 2 with the message `evalkit.api.gate` raises; the message."""
    code = main(command(run, baseline, options))
    printed = capsys.readouterr()
    with pytest.raises(EvalkitError) as raised:
        gate(run, baseline, **options)
    assert code == 2 and printed.out == ""
    assert printed.err == f"evalkit: error: {raised.value}\n"
    return str(raised.value)


# run, baseline, options, verdict: the cases of test_gate.py
SYNTHETIC = [
    ("regress3", "base", {"junit": True}, V.FAIL_DROP),
    ("regress1", "base", {}, V.PASS),
    ("noisy3", "base", {"require_significant": True}, V.PASS_NOT_SIGNIFICANT),
    ("regress3", "base", {"require_significant": True}, V.FAIL_DROP),
    ("noisy3", "base", {}, V.FAIL_DROP),
    ("regress1", "base", {"max_drop": 0.01}, V.PASS),
    ("regress1", "base", {"max_drop": 0.009}, V.FAIL_DROP),
    ("base", "regress3", {}, V.PASS),
    ("newversion", "base", {}, V.FAIL_UNVERIFIED),
    ("newversion", "base", {"allow_version_change": True}, V.FAIL_UNVERIFIED),
    # no judged checks: --require-calibrated has nothing to fail on
    (
        "noisy3",
        "base",
        {"require_significant": True, "require_calibrated": True, "junit": True},
        V.PASS_NOT_SIGNIFICANT,
    ),
]


@pytest.mark.parametrize(("run", "against", "options", "verdict"), SYNTHETIC)
def test_synthetic_runs(
    runs: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    run: str,
    against: str,
    options: dict[str, Any],
    verdict: GateVerdict,
) -> None:
    if options.get("junit"):
        options = options | {"junit": tmp_path / "junit.xml"}
    outcome = same_gate(capsys, runs[run], runs[against], **options)
    assert outcome.decision.verdict is verdict
    assert outcome.exit_code == int(verdict.failed)
    assert outcome.decision.calibration is None


def test_errored_cases_and_allow_unscored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rep = make_run(tmp_path, "rep", BASE, repeats=3, errors=frozenset({399}))
    base = make_run(tmp_path, "base", BASE)
    strict = same_gate(capsys, rep, base, junit=tmp_path / "junit.xml")
    assert strict.decision.verdict is V.FAIL_UNVERIFIED and strict.decision.unverified == 1
    loose = same_gate(capsys, rep, base, allow_unscored=1)
    assert loose.decision.verdict is V.PASS and loose.decision.allow_unscored == 1


def test_inputs_the_gate_cannot_judge(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad_json = tmp_path / "baseline.json"
    bad_json.write_text("{not json", encoding="utf-8")
    assert "not valid JSON" in same_error(capsys, runs["regress3"], bad_json)
    assert "no such run directory" in same_error(capsys, runs["regress3"], tmp_path / "missing.json")
    assert "no manifest.json" in same_error(capsys, tmp_path / "no-run", runs["base"])
    assert "suite" in same_error(capsys, runs["othersuite"], runs["base"])
    assert "interrupted" in same_error(capsys, runs["unfinished"], runs["base"])
    assert "--allow-unscored" in same_error(capsys, runs["regress3"], runs["base"], allow_unscored=-1)


def test_the_default_baseline_is_the_suites_committed_one(tmp_path: Path) -> None:
    base = make_run(tmp_path, "base", BASE)
    after = make_run(tmp_path, "after", BASE - {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
    with pytest.raises(EvalkitError, match=r"has no baseline\.json to gate against"):
        gate(after)
    with pytest.raises(EvalkitError, match=r"has no baseline\.json to gate against"):
        Run(after).gate()
    committed = accept(base).path
    assert committed == tmp_path / "synthetic" / "baseline.json"
    explicit = gate(after, committed)
    assert explicit.decision.verdict is V.FAIL_DROP
    for outcome in (
        gate(after),
        gate(Run(after)),
        Run(after).gate(),
        gate(after, Run(base)),
        gate(after, base),
    ):
        assert outcome.decision == explicit.decision
    assert gate(after).text == explicit.text == Run(after).gate().text


def test_evalkit_run_gate_is_the_same_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "invoices"
    shutil.copytree(ROOT / "goldens" / "invoice-extraction", suite)
    cases = (suite / "cases.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (suite / "cases.jsonl").write_text(
        "".join(cases[:-1]), encoding="utf-8"
    )  # a new suite version, a case gone
    committed = suite / "baseline.json"
    loose = {"max_drop": 0.01, "allow_unscored": 1, "allow_version_change": True, "require_calibrated": True}
    verdicts = []
    for name, options in (("strict", {}), ("loose", loose)):
        out = tmp_path / "runs" / name
        flags = command(out, committed, options)[4:]
        code = main(
            [
                "run",
                str(suite),
                "--system",
                "baseline",
                "--cache",
                "off",
                "-q",
                "--out",
                str(out),
                "--gate",
                *flags,
            ]
        )
        printed = capsys.readouterr().out
        outcome = same_gate(capsys, out, committed, **options)
        assert code == outcome.exit_code
        assert "\n  " + outcome.text.replace("\n", "\n  ") + "\n" in printed
        verdicts.append(outcome.decision.verdict)
    assert verdicts == [V.FAIL_UNVERIFIED, V.PASS]


def _record(suite_dir: Path, *, judge_model: str | None = None, kappa: float = 0.9) -> None:
    """A calibration record beside the suite's labels, of the suite's current judge unless told otherwise."""
    settings = load_suite(suite_dir).config.judge
    template = load_template("judge_rubric")
    record = CalibrationRecord(
        suite="refund-policy-qa",
        suite_version="v1",
        judge_model=judge_model or settings.model,
        prompt=template.name,
        prompt_hash=template.hash,
        pass_rule=settings.pass_rule,
        kappa=kappa,
        check="faithfulness",
        checks={"faithfulness": {"kappa": kappa, "kappa_ci": (0.8, 0.95), "n": 16, "missing": {}}},
        n=16,
        verdicts_extra=0,
        stale=0,
        labels=None,
        run_id="r",
        date="2025-01-01",
        seed=0,
    )
    (suite_dir / "labels").mkdir(exist_ok=True)
    (suite_dir / "labels" / "calibration.json").write_text(record.model_dump_json(), encoding="utf-8")


def test_judged_runs_calibrated_uncalibrated_and_stale(
    judged_run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite_dir, run_dir = judged_run
    baseline = suite_dir / "baseline.json"
    junit = tmp_path / "junit.xml"
    said = same_gate(capsys, run_dir, baseline)
    assert said.decision.verdict is V.PASS and said.decision.calibration == "uncalibrated"
    assert "judge uncalibrated" in said.text
    strict = same_gate(capsys, run_dir, baseline, require_calibrated=True, junit=junit)
    assert strict.decision.verdict is V.FAIL_UNCALIBRATED and "--require-calibrated" in strict.text
    # with no baseline given, the suite's committed baseline.json, and the same verdict
    assert Run(run_dir).gate(require_calibrated=True).text == gate(run_dir, require_calibrated=True).text
    assert gate(run_dir, require_calibrated=True).decision == strict.decision

    _record(suite_dir)
    calibrated = same_gate(capsys, run_dir, baseline, require_calibrated=True, junit=junit)
    assert calibrated.decision.verdict is V.PASS and calibrated.decision.calibration == "calibrated"

    _record(suite_dir, judge_model="claude-another-judge")
    stale = same_gate(capsys, run_dir, baseline)
    assert stale.decision.verdict is V.PASS and stale.decision.calibration == "stale"
    strict = same_gate(capsys, run_dir, baseline, require_calibrated=True)
    assert strict.decision.verdict is V.FAIL_UNCALIBRATED and "judged results are stale" in strict.text


# the cases of test_gate_fail_closed.py: real runs of a 200-case suite, the judge through the local server


@pytest.mark.slow
def test_errors_and_a_judge_switched_off(
    baseline: tuple[Path, Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite_root, base, _ = baseline

    def answer(n: int) -> str:
        if n >= 2:
            raise RuntimeError("upstream is down")
        return "yes"

    bad = run(suite_root, tmp_path, answer, name="errors")
    junit = tmp_path / "junit.xml"
    assert same_gate(capsys, bad, base, junit=junit).decision.verdict is V.FAIL_UNVERIFIED
    assert same_gate(capsys, bad, base, allow_unscored=198, junit=junit).decision.verdict is V.PASS
    assert same_gate(capsys, bad, base, allow_unscored=197).decision.verdict is V.FAIL_UNVERIFIED
    nojudge = run(suite_root, tmp_path, lambda n: "yes, maybe" if n in JUDGED else "yes", name="nojudge")
    assert same_gate(capsys, nojudge, base).decision.verdict is V.FAIL_UNVERIFIED


@pytest.mark.slow
def test_rewritten_deleted_and_unhashed(
    baseline: tuple[Path, Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite_root, base, server = baseline
    regressed = set(range(50))
    write_suite(suite_root, [case(i, "no" if i in regressed else "yes") for i in range(N)])
    rewritten = run(
        suite_root, tmp_path, lambda n: "no" if n in regressed else "yes", server=server, name="rewritten"
    )
    assert same_gate(capsys, rewritten, base).decision.verdict is V.FAIL_UNVERIFIED
    allowed = same_gate(capsys, rewritten, base, allow_version_change=True)
    assert allowed.decision.verdict is V.PASS and allowed.decision.shared == N - 50
    worse = run(
        suite_root,
        tmp_path,
        lambda n: "no" if n in regressed or 60 <= n < 65 else "yes",
        server=server,
        name="w",
    )
    junit = tmp_path / "junit.xml"
    assert (
        same_gate(capsys, worse, base, allow_version_change=True, junit=junit).decision.verdict is V.FAIL_DROP
    )

    write_suite(suite_root, [case(i) for i in range(50, N)])
    deleted = run(suite_root, tmp_path, lambda n: "yes", server=server, name="deleted")
    assert same_gate(capsys, deleted, base).decision.verdict is V.FAIL_UNVERIFIED
    loose = same_gate(capsys, deleted, base, allow_version_change=True, junit=junit)
    assert loose.decision.verdict is V.FAIL_UNVERIFIED and loose.decision.unverified == 50

    data = json.loads(base.read_text(encoding="utf-8"))
    del data["case_hashes"], data["digest"]  # as written before either was kept
    base.write_text(json.dumps(data), encoding="utf-8")
    unhashed = same_gate(capsys, rewritten, base, allow_version_change=True)
    assert unhashed.decision.verdict is V.FAIL_UNVERIFIED and "no per-case content hashes" in unhashed.text
