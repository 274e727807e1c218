"""How the report shows the judge's calibration (a `JudgeTrust` handed to it): badges, the judged-checks table,
the corrected rate, what to do without labels, nothing when not required; and the report never loads calibration."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from evalkit._report import build_report, format_report, render_html, trust_lines
from evalkit._results import Manifest, read_run
from evalkit._runner import Runner, RunOptions
from evalkit._systems import load_system
from evalkit.calibration import JudgedCheck, JudgeTrust
from evalkit.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Manifest, pl.DataFrame]:
    folder = tmp_path_factory.mktemp("plain")
    suite = load_suite(ROOT / "goldens" / "support-triage")
    options = RunOptions(out_root=folder, progress=False, judge="off")
    return read_run(Runner(suite, load_system("baseline", suite), options).run().run_dir)


def _check(**kw: object) -> JudgedCheck:
    base: dict[str, object] = {
        "check": "faithfulness",
        "state": "uncalibrated",
        "verdicts": 78,
        "not_judged": 0,
        "judge_only_rate": 0.1,
    }
    return JudgedCheck.model_validate(base | kw)


def _trust(**kw: object) -> JudgeTrust:
    base: dict[str, object] = {"state": "uncalibrated", "reason": "no calibration record", "min_kappa": 0.6}
    return JudgeTrust.model_validate(base | kw)


def _page(run: tuple[Manifest, pl.DataFrame], trust: JudgeTrust | None) -> str:
    return render_html(build_report(*run, judge=trust))


def test_uncalibrated_with_a_corrected_rate(plain_run: tuple[Manifest, pl.DataFrame]) -> None:
    check = _check(corrected=0.25, ci_low=0.12, ci_high=0.39, method="ppi++", n_labelled=39, lam=0.42)
    trust = _trust(checks=[check], labels=["labels/half.jsonl"], labels_read=39, labels_joined=39)
    page = _page(plain_run, trust)
    headline = page[page.index('<p class="big">') :]
    assert headline.index("judge uncalibrated") < headline.index("</p>")  # the badge sits beside the rate
    assert re.findall(r'class="badge b-(\w+)"', page) == ["uncalibrated"] * 3
    assert "<b>25.0%</b> (95% CI 12.0%–39.0%)" in page and '<td class="num">0.42</td>' in page
    assert "PPI++, Angelopoulos et al. 2023" in page and "39 match this run's outputs" in page
    text = format_report(build_report(*plain_run, judge=trust))
    assert "  judge uncalibrated: no calibration record\n" in text
    assert (
        "    faithfulness (judge, uncalibrated): judge only 10.0% on 78; corrected (PPI++, 39 labelled, "
        "lambda 0.42) 25.0% 95% CI 12.0%–39.0%"
    ) in text


def test_no_labels_says_how_to_get_them_and_user_text_is_escaped(
    plain_run: tuple[Manifest, pl.DataFrame],
) -> None:
    trust = _trust(
        reason=EVIL,
        checks=[_check(check=EVIL, note="no labels of this check match the run's outputs")],
        labels_dir="goldens/x/labels",
    )
    page = _page(plain_run, trust)
    assert EVIL not in page and "&lt;script&gt;" in page
    assert "evalkit review sample RUN --n 30 --out goldens/x/labels/review.jsonl" in page
    assert "notebooks/03_calibrate_judge.ipynb" in page and "no labels files in goldens/x/labels" in page
    assert trust_lines(trust)[0].endswith("; corrected pass rate: no labels")


def test_not_required_is_quiet_and_calibrated_marks_no_check(
    plain_run: tuple[Manifest, pl.DataFrame],
) -> None:
    quiet = _trust(state="not required", reason="suite.toml sets no [judge] min_kappa", min_kappa=None)
    quiet = quiet.model_copy(update={"checks": [_check(state="not required")]})
    assert quiet.quiet and trust_lines(quiet) == []
    assert _page(plain_run, quiet) == _page(plain_run, None)
    shown = quiet.model_copy(update={"checks": [_check(state="not required", method="human", corrected=0.2)]})
    page = _page(plain_run, shown)
    assert "judge-trust" in page and "b-" not in "".join(re.findall(r'class="badge [^"]*"', page))
    ok = _trust(
        state="calibrated", reason="kappa 0.710 on 40 >= min_kappa 0.6", checks=[_check(state="calibrated")]
    )
    assert re.findall(r'class="badge b-(\w+)"', _page(plain_run, ok)) == ["calibrated", "calibrated"]


def test_the_report_package_does_not_load_calibration() -> None:
    code = (
        "import sys, evalkit._report, evalkit._report._html, evalkit._report._calibration\n"
        "assert not [m for m in sys.modules if m.startswith('evalkit.calibration')]\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
