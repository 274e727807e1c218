"""`evalkit report` and `evalkit run` say whether the judge is calibrated and give the corrected pass rate:
uncalibrated with no record, calibrated once `evalkit calibrate` wrote one meeting the bar, stale when the judge
changes; the corrected rate is `corrected_pass_rate`'s; missing or stale labels are stated, never fatal."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from evalkit._report import pct
from evalkit.calibration import (
    calibrate,
    calibration_record,
    corrected_pass_rate,
    read_calibration_record,
    read_labels,
    write_calibration_record,
)
from evalkit.cli._main import main
from evalkit.testing import JudgeRule, LocalAnthropicServer, SimulatedJudge

ROOT = Path(__file__).resolve().parents[2]
RPQ = ROOT / "goldens" / "refund-policy-qa"


def _set_judge(suite_dir: Path, lines: str) -> None:
    toml = (suite_dir / "suite.toml").read_text(encoding="utf-8")
    head = toml[: toml.index("[judge]")]
    (suite_dir / "suite.toml").write_text(f"{head}[judge]\n{lines}\n", encoding="utf-8")


@pytest.fixture(scope="module")
def server() -> Iterator[LocalAnthropicServer]:
    with LocalAnthropicServer(judge=SimulatedJudge()) as s:
        yield s


@pytest.fixture
def env(server: LocalAnthropicServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local-test-key")
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def judged(tmp_path: Path, env: None, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A copy of refund-policy-qa with min_kappa 0.6 and every other shipped label (39 of 78) in labels/, run
    with `evalkit run` against the simulated judge; (suite folder, run folder)."""
    suite_dir = tmp_path / "rpq"
    shutil.copytree(RPQ, suite_dir, ignore=shutil.ignore_patterns("labels"))
    _set_judge(suite_dir, 'model = "claude-opus-4-6"\nmin_kappa = 0.6')
    (suite_dir / "labels").mkdir()
    lines = (RPQ / "labels" / "baseline.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (suite_dir / "labels" / "half.jsonl").write_text("".join(lines[::2]), encoding="utf-8")
    runs = tmp_path / "runs"
    argv = [
        "run",
        str(suite_dir),
        "--system",
        "baseline",
        "--judge",
        "on",
        "--quiet",
        "--runs-dir",
        str(runs),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # the run's own summary says it, under the pass rate
    assert "  judge uncalibrated: no calibration record at" in out
    assert out.index("judge uncalibrated") < out.index("slice")
    (run_dir,) = runs.iterdir()
    return suite_dir, run_dir


def _report(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[str, str]:
    page = tmp_path / "report.html"
    assert main(["report", str(run_dir), "--html", str(page), *extra]) == 0
    return capsys.readouterr().out, page.read_text(encoding="utf-8")


def _badges(html: str) -> list[str]:
    return re.findall(r'<span class="badge b-([a-z-]+)">', html)


def test_uncalibrated_then_calibrated_then_stale(
    judged: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite_dir, run_dir = judged
    text, html = _report(run_dir, tmp_path, capsys)
    assert "judge uncalibrated: no calibration record at" in text
    # one badge beside the headline rate, one on the state line, one on the judged check's rate
    assert _badges(html) == ["uncalibrated"] * 3 and 'id="judge-trust"' in html
    labels = suite_dir / "labels" / "half.jsonl"
    # the real calibrate path: the run judged 9 of the labelled outputs and failed all 9, so kappa is undefined
    # (it was 0.000, and min_kappa = 0 then called the judge "calibrated"): no kappa measured, no record, exit 1
    assert main(["calibrate", str(run_dir), "--labels", str(labels), "--n-boot", "50"]) == 1
    out = capsys.readouterr().out
    assert (
        "machine gave one label only; kappa is undefined" in out and "judge kappa not measured: FAIL" in out
    )
    assert read_calibration_record(suite_dir / "labels" / "calibration.json") is None
    # a record of a judge whose verdicts vary (the simulated judge fails every one of these outputs, so one is
    # written through the API with a measured kappa of 0.5 on the same 9 outputs)
    made = calibration_record(calibrate(run_dir, labels, n_boot=50))
    checks = {k: v.model_copy(update={"kappa": 0.5}) for k, v in made.checks.items()}
    record = made.model_copy(update={"kappa": 0.5, "check": "faithfulness", "checks": checks})
    write_calibration_record(record, suite_dir / "labels" / "calibration.json")
    assert record.n == 9  # the judged half-labelled outputs
    text, html = _report(run_dir, tmp_path, capsys)
    # the record names the simulated judge that answered: no bar makes it Claude's calibration
    assert "judge uncalibrated: the record of" in text and "measured against simulated-judge" in text
    # a bar the record meets, but the simulated judge answered: never calibrated for claude-opus-4-6
    assert record.answered_by == ["simulated-judge"]
    _set_judge(suite_dir, f'model = "claude-opus-4-6"\nmin_kappa = {record.kappa}')
    text, html = _report(run_dir, tmp_path, capsys)
    assert "judge calibrated" not in text and "measured against simulated-judge" in text
    # the same figures from a record of the model asked for: calibrated, and the check's kappa is shown
    write_calibration_record(
        record.model_copy(update={"answered_by": ["claude-opus-4-6"]}),
        suite_dir / "labels" / "calibration.json",
    )
    text, html = _report(run_dir, tmp_path, capsys)
    assert f"judge calibrated: kappa {record.kappa:.3f}" in text and "on 9 >= min_kappa" in text
    assert _badges(html) == ["calibrated"] * 2  # the check is calibrated too: no "uncalibrated" mark on it
    assert f'<td class="num">{record.kappa:.3f}</td>' in html
    # another judge model: the record no longer speaks for it
    _set_judge(suite_dir, f'model = "claude-haiku-4-5"\nmin_kappa = {record.kappa}')
    text, html = _report(run_dir, tmp_path, capsys)
    assert "judge stale: the record of" in text and "'claude-opus-4-6' -> 'claude-haiku-4-5'" in text
    assert _badges(html) == ["stale"] * 3


def test_the_corrected_rate_is_corrected_pass_rate_on_the_same_run_and_labels(
    judged: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite_dir, run_dir = judged
    est = corrected_pass_rate(run_dir, suite_dir / "labels" / "half.jsonl")
    assert (est.n_labelled, est.n_unlabelled) == (39, 39)
    text, html = _report(run_dir, tmp_path, capsys)
    ci = f"{pct(est.ci_low)}–{pct(est.ci_high)}"
    line = next(x for x in text.splitlines() if x.startswith("    faithfulness (judge"))
    assert line == (
        f"    faithfulness (judge, uncalibrated): judge only {pct(est.judge_only_rate)} on 78; corrected (PPI++, "
        f"39 labelled, lambda {est.lam:.2f}) {pct(est.rate)} 95% CI {ci}"
    )
    assert f"<b>{pct(est.rate)}</b> (95% CI {ci})" in html and "PPI++" in html
    assert f'<td class="num">39</td><td class="num">{est.lam:.2f}</td>' in html
    # --labels chooses other labels: all 78 are every output, so the human rate is the pass rate
    text, html = _report(run_dir, tmp_path, capsys, "--labels", str(RPQ / "labels" / "baseline.jsonl"))
    human = sum(bool(lab.passed) for lab in read_labels(RPQ / "labels" / "baseline.jsonl")) / 78
    assert (
        f"every output labelled: human rate {pct(human)}" in text
        and "human rate, every output labelled" in html
    )


def test_missing_or_stale_labels_are_said_never_fatal(
    judged: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite_dir, run_dir = judged
    labels = suite_dir / "labels" / "half.jsonl"
    rows = [json.loads(x) for x in labels.read_text(encoding="utf-8").splitlines()]
    labels.write_text(
        "".join(json.dumps(r | {"output_hash": "0" * 16}) + "\n" for r in rows), encoding="utf-8"
    )
    text, html = _report(run_dir, tmp_path, capsys)
    assert (
        "corrected pass rate: no labels match this run's outputs (39 stale: the outputs changed since)"
        in text
    )
    assert "evalkit review sample" in html and "notebooks/03_calibrate_judge.ipynb" in html
    shutil.rmtree(suite_dir / "labels")
    text, html = _report(run_dir, tmp_path, capsys)
    assert "corrected pass rate: no labels" in text and "no labels files in" in html
    text, _ = _report(run_dir, tmp_path, capsys, "--labels", str(tmp_path / "typo.jsonl"))
    assert f"labels file {tmp_path / 'typo.jsonl'} was not read" in text and "no such file" in text


def test_not_required_shows_no_badge_and_an_unjudged_run_imports_no_calibration(
    tmp_path: Path, env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # the shipped suite sets no min_kappa: no badge; its labels cover every output, so the human rate shows
    runs = tmp_path / "runs"
    argv = ["run", str(RPQ), "--system", "baseline", "--judge", "on", "--quiet", "--runs-dir", str(runs)]
    assert main([*argv, "--report"]) == 0
    out = capsys.readouterr().out
    assert "judge not required: suite.toml sets no [judge] min_kappa" in out
    (run_dir,) = runs.iterdir()
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert _badges(html) == [] and "human rate, every output labelled" in html
    # a suite with no judge check: nothing said, and neither command loads the calibration package
    code = (
        "import sys\nfrom evalkit.cli._main import main\n"
        f"assert main(['run', {str(ROOT / 'goldens' / 'support-triage')!r}, '--system', 'baseline', '--quiet', "
        f"'--report', '--runs-dir', {str(tmp_path / 'plain')!r}]) == 0\n"
        "import pathlib\n"
        f"(run,) = pathlib.Path({str(tmp_path / 'plain')!r}).iterdir()\n"
        "assert main(['report', str(run)]) == 0\n"
        "assert not [m for m in sys.modules if m.startswith('evalkit.calibration')], 'calibration imported'\n"
        "assert 'judge-trust' not in (run / 'report.html').read_text()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "judge" not in done.stdout.split("slice")[0]


def test_too_few_labels_show_the_human_only_interval_not_a_corrected_rate(
    judged: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 23: with 8 labels `report --labels` printed "corrected ... 0.0% 95% CI 0.0%-0.0%"
    suite_dir, run_dir = judged
    lines = (suite_dir / "labels" / "half.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    few = tmp_path / "few.jsonl"
    few.write_text("".join(lines[:8]), encoding="utf-8")
    est = corrected_pass_rate(run_dir, few)
    assert est.n_labelled == 8 and not est.corrected and est.ci_high > est.ci_low
    text, html = _report(run_dir, tmp_path, capsys, "--labels", str(few))
    line = next(x for x in text.splitlines() if x.startswith("    faithfulness (judge"))
    assert "too few labels for a corrected rate: 10 needed, 8 given" in line and "PPI++" not in line
    assert f"human rate {pct(est.human_only_rate)} 95% CI {pct(est.ci_low)}–{pct(est.ci_high)} on 8" in line
    assert "too few labels for a corrected rate" in html


def test_calibrate_fails_a_kappa_over_the_bar_measured_against_the_simulated_judge(
    judged: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A simulated judge that agrees with every label reaches any bar; the suite's judge is still not calibrated,
    so the bar is not met and calibrate exits 1 (it exited 0)."""
    suite_dir, run_dir = judged
    labels = suite_dir / "labels" / "half.jsonl"
    human = read_labels(labels)
    rows = pl.read_parquet(run_dir / "results.parquet").unique("case_id")
    outputs = {
        c: json.loads(o) for c, o in zip(rows["case_id"], rows["output"], strict=True) if o is not None
    }
    judged_text = {
        c: str(o.get("answer", o) if isinstance(o, dict) else o).strip()[:60] for c, o in outputs.items()
    }
    rules = [
        JudgeRule(candidate=judged_text[label.case_id], met=bool(label.passed))
        for label in human
        if judged_text.get(label.case_id) and label.passed is not None
    ]
    assert {r.met for r in rules} == {True, False}  # the labels vary, so a kappa can be measured
    with LocalAnthropicServer(judge=SimulatedJudge(rules=rules, overlap=1.0)) as agreeing:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", agreeing.base_url)
        monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "agreeing-cache"))
        runs = tmp_path / "agreeing-runs"
        argv = ["run", str(suite_dir), "--system", "baseline", "--judge", "on", "-q", "--runs-dir", str(runs)]
        assert main(argv) == 0
        (again,) = runs.iterdir()
        capsys.readouterr()
        code = main(["calibrate", str(again), "--labels", str(labels), "--judge-all", "--n-boot", "50"])
    out = capsys.readouterr().out
    record = read_calibration_record(suite_dir / "labels" / "calibration.json")
    assert record is not None and record.kappa is not None and record.kappa >= 0.6, out
    assert record.answered_by == ["simulated-judge"]  # was None: the verdicts judged now were not counted
    assert code == 1 and "FAIL (judge uncalibrated" in out and "simulated-judge" in out, out
