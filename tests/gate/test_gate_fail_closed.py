"""The gate fails closed: a run that cannot show its pass rate held does not pass.

Each test makes real runs of a 200-case suite on disk (a Python system; the judge through the local server and
the real SDK), accepts the first as baseline.json, and gates a second run that would have passed a gate that
only compared what was left: errors, a judge switched off, rewritten expected answers, deleted cases.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from gated_suite import JUDGED, N, case, judge_responder, run, write_suite

from evalkit._baseline import load_baseline
from evalkit._gate import run_gate

# end-to-end: real processes, servers or kernels (`pytest -m 'not slow'` leaves them out while working)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalkit.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def junit_failures(path: Path) -> dict[str, str]:
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        f = tc.find("failure")
        if f is not None:
            out[tc.get("name", "")] = f.get("type", "")
    return out


def test_a_run_of_errors_fails_and_says_to_resume(baseline: tuple[Path, Path, Any], tmp_path: Path) -> None:
    suite_root, base, _ = baseline

    def answer(n: int) -> str:
        if n >= 2:
            raise RuntimeError("upstream is down")
        return "yes"

    bad = run(suite_root, tmp_path, answer, name="errors")
    junit = tmp_path / "junit.xml"
    outcome = run_gate(bad, base, junit=junit)
    assert outcome.exit_code == 1
    assert "198 baseline cases could not be verified" in outcome.text
    assert f"evalkit run --resume {bad}" in outcome.text
    failures = junit_failures(junit)
    assert len([t for t in failures.values() if t == "unverified"]) == 198
    assert "c199" in failures and "c000" not in failures
    # tolerating exactly that many is an explicit, printed choice
    loose = run_gate(bad, base, allow_unscored=198, junit=junit)
    assert loose.exit_code == 0 and "allow_unscored=198" in loose.text
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert props["gate_allow_unscored"] == "198" and props["gate_unverified"] == "198"
    assert run_gate(bad, base, allow_unscored=197).exit_code == 1
    proc = cli("gate", bad, "--baseline", base)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "UNVERIFIED" in proc.stdout


def test_judge_off_against_judged_baseline_fails(baseline: tuple[Path, Path, Any], tmp_path: Path) -> None:
    suite_root, base, _ = baseline
    # the judged cases regressed, but with the judge off nobody sees it
    bad = run(suite_root, tmp_path, lambda n: "yes, maybe" if n in JUDGED else "yes", name="nojudge")
    outcome = run_gate(bad, base)
    assert outcome.exit_code == 1
    assert "90 have judge checks that were not judged" in outcome.text
    assert "--cache replay" in outcome.text
    proc = cli("gate", bad, "--baseline", base)
    assert proc.returncode == 1 and "not judged" in proc.stdout


def test_rewritten_expected_answers_fail_unless_the_change_is_allowed(
    baseline: tuple[Path, Path, Any], tmp_path: Path
) -> None:
    suite_root, base, server = baseline
    assert load_baseline(base).case_hashes is not None
    # 50 exact cases regressed to "no", and their expected answers were rewritten to match
    regressed = set(range(50))
    rows = [case(i, "no" if i in regressed else "yes") for i in range(N)]
    write_suite(suite_root, rows)
    bad = run(
        suite_root, tmp_path, lambda n: "no" if n in regressed else "yes", server=server, name="rewritten"
    )
    outcome = run_gate(bad, base)
    assert outcome.exit_code == 1
    assert "suite version differs" in outcome.text and "evalkit baseline accept" in outcome.text
    proc = cli("gate", bad, "--baseline", base)
    assert proc.returncode == 1, proc.stdout
    # allowed: the 50 rewritten cases are other cases now and are left out; the other 150 held
    allowed = run_gate(bad, base, allow_version_change=True)
    assert allowed.exit_code == 0, allowed.text
    assert allowed.comparison.paired.n == N - 50
    assert "50 baseline cases changed content" in allowed.text and "allow_version_change" in allowed.text
    # and a real regression among the unchanged cases still fails
    worse = run(
        suite_root,
        tmp_path,
        lambda n: "no" if n in regressed or n in (60, 61, 62, 63, 64) else "yes",
        server=server,
        name="w",
    )
    assert run_gate(worse, base, allow_version_change=True).exit_code == 1


def test_an_old_baseline_without_case_hashes_cannot_allow_a_version_change(
    baseline: tuple[Path, Path, Any], tmp_path: Path
) -> None:
    suite_root, base, server = baseline
    data = json.loads(base.read_text(encoding="utf-8"))
    del data["case_hashes"], data["digest"]  # as written before either was kept
    base.write_text(json.dumps(data), encoding="utf-8")
    write_suite(suite_root, [case(i, "no" if i == 0 else "yes") for i in range(N)])
    bad = run(suite_root, tmp_path, lambda n: "no" if n == 0 else "yes", server=server, name="old")
    outcome = run_gate(bad, base, allow_version_change=True)
    assert outcome.exit_code == 1
    assert "no per-case content hashes" in outcome.text


def test_deleting_the_regressed_cases_fails(baseline: tuple[Path, Path, Any], tmp_path: Path) -> None:
    suite_root, base, server = baseline
    write_suite(suite_root, [case(i) for i in range(50, N)])
    bad = run(suite_root, tmp_path, lambda n: "yes", server=server, name="deleted")
    junit = tmp_path / "junit.xml"
    outcome = run_gate(bad, base, junit=junit, allow_version_change=True)
    assert outcome.exit_code == 1
    assert "50 are in the baseline but not in this run" in outcome.text
    failures = junit_failures(junit)
    assert {f"c{i:03d}" for i in range(50)} <= set(failures)
    assert re.search(r"c000, c001, .* and 40 more", outcome.text)
    proc = cli("gate", bad, "--baseline", base)
    assert proc.returncode == 1 and "not in this run" in proc.stdout


def test_a_baseline_accepted_without_the_judge_cannot_vouch_for_its_judged_cases(
    tmp_path: Path, make_anthropic_server: Any
) -> None:
    from evalkit._baseline import accept

    suite_root = write_suite(tmp_path / "suite", [case(i) for i in range(N)])
    unjudged = run(suite_root, tmp_path, lambda n: "yes", name="unjudged")  # the judge off: 90 unscored
    base = accept(unjudged).path
    # the judged cases regressed; the baseline has no verdict on them to hold the run to
    server = make_anthropic_server(judge_responder)
    now = run(
        suite_root, tmp_path, lambda n: "yes, maybe" if n in JUDGED else "yes", server=server, name="now"
    )
    outcome = run_gate(now, base)
    assert outcome.exit_code == 1 and "PASS" not in outcome.decision.reason
    assert "UNVERIFIED: 90 baseline cases could not be verified" in outcome.text
    assert (
        "90 have no verdict in the baseline" in outcome.text and "baseline accept RUN --force" in outcome.text
    )
    # --allow-unscored keeps its meaning: that many cases tolerated, said in the verdict
    loose = run_gate(now, base, allow_unscored=90)
    assert loose.exit_code == 0 and "tolerated: 90 baseline cases" in loose.text
    assert run_gate(now, base, allow_unscored=89).exit_code == 1


def test_a_baseline_case_that_errored_cannot_vouch_for_it(tmp_path: Path) -> None:
    from evalkit._baseline import accept

    suite_root = write_suite(tmp_path / "suite", [case(i) for i in range(N)])

    def flaky(n: int) -> str:
        if n < 5:
            raise RuntimeError("the pipeline was down")
        return "yes"

    base = accept(run(suite_root, tmp_path, flaky, name="base")).path
    now = run(suite_root, tmp_path, lambda n: "yes" if n >= 5 else "no", name="now")  # the 5 fail now
    outcome = run_gate(now, base)
    # they were errors in the baseline: it cannot say they passed then, so the gate cannot pass them unseen
    # (90 more are judged cases this judge-off baseline never scored; it said 90 before)
    assert outcome.exit_code == 1 and "UNVERIFIED: 95 baseline cases could not be verified" in outcome.text
    assert "ended in an error there): c000, c001, c002, c003, c004," in outcome.text
