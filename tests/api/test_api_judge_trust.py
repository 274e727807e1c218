"""The notebook API shows the judge's calibration state: `Run.judge_trust()`, `Run.report()` and the run card."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import evalkit as ek
from evalkit._report import pct
from evalkit.calibration import corrected_pass_rate, read_labels, write_labels
from evalkit.testing import LocalAnthropicServer, SimulatedJudge

ROOT = Path(__file__).resolve().parents[2]
RPQ = ROOT / "goldens" / "refund-policy-qa"


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> ek.Run:
    """refund-policy-qa with min_kappa 0.6 and a third of the shipped labels, run against the simulated judge."""
    folder = tmp_path_factory.mktemp("api-trust")
    suite_dir = folder / "rpq"
    shutil.copytree(RPQ, suite_dir, ignore=shutil.ignore_patterns("labels"))
    toml = (suite_dir / "suite.toml").read_text(encoding="utf-8")
    (suite_dir / "suite.toml").write_text(
        toml.replace("[judge]", "[judge]\nmin_kappa = 0.6", 1), encoding="utf-8"
    )
    (suite_dir / "labels").mkdir()
    lines = (RPQ / "labels" / "baseline.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (suite_dir / "labels" / "third.jsonl").write_text("".join(lines[::3]), encoding="utf-8")
    with LocalAnthropicServer(judge=SimulatedJudge()) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_BASE_URL", server.base_url)
        mp.setenv("ANTHROPIC_API_KEY", "test")
        return ek.run(
            suite_dir,
            "baseline",
            judge="on",
            runs_dir=folder / "runs",
            cache_dir=folder / "cache",
            progress=False,
        )


def test_judge_trust_report_and_card_agree_with_corrected_pass_rate(judged: ek.Run) -> None:
    trust = judged.judge_trust()
    assert trust is not None and trust.state == "uncalibrated" and trust.min_kappa == 0.6
    (check,) = trust.checks
    est = corrected_pass_rate(judged, Path(judged.suite.base_dir) / "labels" / "third.jsonl")
    assert check.method == "ppi++" and check.n_labelled == est.n_labelled == 26
    assert (check.corrected, check.ci_low, check.ci_high, check.lam) == (
        est.rate,
        est.ci_low,
        est.ci_high,
        est.lam,
    )
    assert check.judge_only_rate == pytest.approx(est.judge_only_rate) and check.verdicts == 78
    page = judged.report().html
    assert '<span class="badge b-uncalibrated">judge uncalibrated</span>' in page
    assert f"<b>{pct(est.rate)}</b> (95% CI {pct(est.ci_low)}–{pct(est.ci_high)})" in page
    card = judged._repr_html_()
    assert "judge uncalibrated: no calibration record" in card and "corrected (PPI++, 26 labelled" in card
    # other labels, given: every output labelled, so the human rate stands for the pass rate
    every = judged.judge_trust(labels=RPQ / "labels" / "baseline.jsonl")
    assert every is not None and every.checks[0].method == "human" and every.checks[0].n_labelled == 78
    assert "human rate, every output labelled" in judged.report(labels=RPQ / "labels" / "baseline.jsonl").html


def test_a_run_with_no_judged_check_says_nothing_of_a_judge(tmp_path: Path) -> None:
    run = ek.run(ROOT / "goldens" / "support-triage", "baseline", runs_dir=tmp_path, progress=False)
    assert run.judge_trust() is None
    assert "judge-trust" not in run.report().html and "calibrat" not in run._repr_html_()


def test_judge_off_the_human_rate_covers_every_case_and_ppi_says_what_it_leaves_out(tmp_path: Path) -> None:
    run = ek.run(RPQ, "baseline", judge="off", runs_dir=tmp_path, progress=False)
    shipped = RPQ / "labels" / "baseline.jsonl"
    trust = run.judge_trust()  # the shipped labels folder: every output is labelled
    assert trust is not None and trust.state == "not required"
    (check,) = trust.checks
    assert (check.verdicts, check.not_judged) == (62, 16)  # cascade fails; the 16 the judge never saw
    human = [bool(lab.passed) for lab in read_labels(shipped)]
    assert check.method == "human" and check.n_labelled == 78 and check.corrected == sum(human) / 78
    half = tmp_path / "half.jsonl"
    write_labels(half, read_labels(shipped)[::2])
    (ppi,) = run.judge_trust(labels=half).checks  # type: ignore[union-attr]
    est = corrected_pass_rate(run, half)
    assert (
        ppi.method == "ppi++" and ppi.corrected == est.rate and ppi.note == "16 cases not judged are left out"
    )
