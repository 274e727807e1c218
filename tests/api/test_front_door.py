"""The front door: `evalkit run`, `evalkit report` and `--dry-run` print what `evalkit.api` gives for the same
run, and a resume is an API call."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import evalkit as ek
from evalkit import api
from evalkit.cli import main
from evalkit.errors import EvalkitError

ROOT = Path(__file__).resolve().parents[2]
TRIAGE = ROOT / "goldens" / "support-triage"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def _saved(out: str) -> Path:
    found = re.search(r"run saved to (\S+)", out)
    assert found, out
    return Path(found.group(1))


def test_evalkit_run_prints_the_runs_summary(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = _cli(
        capsys,
        "run",
        str(TRIAGE),
        "--system",
        "baseline",
        "--runs-dir",
        str(tmp_path),
        "-q",
        "--show-failures",
        "3",
    )
    assert code == 0
    run = ek.load_run(_saved(out))
    summary = run.summary(show_failures=3)
    assert out.startswith(summary + "\n")
    # what the summary says is the run's own: its pass rate and failing cases
    assert f"({int(run.pass_rate().item(0, 'passes'))}/" in summary
    assert run.summary(show_failures="all").count("\n") >= summary.count("\n")


def test_evalkit_report_prints_and_writes_what_run_report_gives(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run = ek.run(TRIAGE, "baseline", runs_dir=tmp_path / "runs", progress=False)
    page = tmp_path / "report.html"
    code, out = _cli(capsys, "report", str(run.path), "--html", str(page), "--show-failures", "all")
    assert code == 0
    made = run.report()
    assert out == made.text(show_failures="all") + f"\n  HTML report written to {page}\n"
    # against the suite's committed baseline by default, as Run.report is
    assert "against" in out.lower() or "baseline" in out.lower()
    assert page.read_text(encoding="utf-8") == made.html
    code, alone = _cli(capsys, "report", str(run.path), "--no-baseline")
    assert alone == run.report(compare=False).text() + "\n"
    assert alone != out


def test_a_report_against_a_baseline_and_without_one_is_refused(tmp_path: Path) -> None:
    run = ek.run(TRIAGE, "baseline", runs_dir=tmp_path, progress=False)
    with pytest.raises(EvalkitError, match="not both"):
        run.report(baseline=run, compare=False)


def test_dry_run_prints_the_estimate(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    code, out = _cli(capsys, "run", str(TRIAGE), "--system", "claude", "--dry-run", "--repeats", "2")
    assert code == 0
    estimate = ek.estimate(TRIAGE, "claude", repeats=2)
    assert out == f"{estimate}\n"
    assert "2 repeat(s)" in out


def test_resume_is_an_api_call_and_runs_only_what_is_missing(tmp_path: Path) -> None:
    first = ek.run(TRIAGE, "baseline", runs_dir=tmp_path, progress=False)
    journal = first.path / "results.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    journal.write_text("".join(lines[:5]), encoding="utf-8")  # as if the run had stopped after five cases
    done = ek.resume(first.path, progress=False)
    assert done.path == first.path and done.status == "complete"
    assert done.verdicts().height == len(lines)
    assert (
        done.verdicts()
        .select("case_id", "status")
        .sort("case_id")
        .equals(first.verdicts().select("case_id", "status").sort("case_id"))
    )


def test_a_resume_asking_for_another_run_says_what_differs(tmp_path: Path) -> None:
    first = ek.run(TRIAGE, "baseline", runs_dir=tmp_path, progress=False)
    with pytest.raises(EvalkitError, match=r"the run has 1 repeat\(s\), not 3.*keeps its own settings"):
        ek.resume(first.path, repeats=3)
    with pytest.raises(EvalkitError, match="a resumed run stays in its own directory"):
        api.resume(first.path, out=tmp_path / "elsewhere")


def test_the_cli_and_the_probes_build_no_runner() -> None:
    # a run is put together in one place: only the front door (and the runner itself) constructs a Runner
    builders = sorted(
        str(f.relative_to(ROOT))
        for f in (ROOT / "evalkit").rglob("*.py")
        if re.search(r"\bRunner\(", f.read_text(encoding="utf-8")) and "_runner" not in f.parts
    )
    assert builders == ["evalkit/api/_execute.py"]
