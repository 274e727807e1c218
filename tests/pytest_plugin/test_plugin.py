"""`pytest --evalkit SUITE`: one item per case, known failures xfail against a baseline, a gate item, the
fixture; run in-process with pytester on the committed support-triage suite (offline, no judge)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.testing import LocalAnthropicServer
from evalkit.testing.server import SimulatedJudge

ROOT = Path(__file__).resolve().parents[2]
SUITE = "goldens/support-triage"
BASELINE = f"{SUITE}/baseline.json"
# the plugin under test; the inner sessions leave out plugins they do not need (pytester drops what an inner
# session imports, so each would import them again)
PLUGIN = ("-p", "evalkit.pytest_plugin", "-p", "no:hypothesispytest", "-p", "no:nbval", "-p", "no:xdist")

# a worse system: the keyword baseline, except that it gives up on every chat ticket
WORSE = """
import importlib.util, pathlib
_spec = importlib.util.spec_from_file_location("kw", pathlib.Path(__file__).parent / "goldens/support-triage/baseline.py")
_kw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_kw)

def predict(input):
    return "other" if input.get("channel") == "chat" else _kw.predict(input)
"""


@pytest.fixture(autouse=True)
def _keep_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester drops the modules an in-process session imported once it ends. evalkit's faces keep what they
    load (`evalkit._lazy`), so a dropped evalkit module imported again later would give two copies of its
    classes to the rest of the test run, and numpy cannot be loaded twice at all: every module is kept, but the
    inner sessions' own test modules."""
    import _pytest.pytester as impl

    snapshot = impl.SysModulesSnapshot

    def keeping(preserve: Callable[[str], bool] | None = None) -> object:
        return snapshot(preserve=lambda name: not name.startswith(("test_", "conftest")))

    monkeypatch.setattr(impl, "SysModulesSnapshot", keeping)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(ROOT / SUITE, pytester.path / SUITE)
    pytester.makepyfile(worse=WORSE)
    return pytester


@pytest.fixture
def small_project(project: pytest.Pytester) -> pytest.Pytester:
    """The suite cut to three cases a slice, for the tests of selection (the suite runs whole whatever runs)."""
    (project.path / SUITE / "cases.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in _small()), encoding="utf-8"
    )
    return project


def _cases() -> list[dict]:
    lines = (ROOT / SUITE / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _small() -> list[dict]:
    seen: Counter[str] = Counter()
    kept = []
    for c in _cases():
        seen[c["slice"]] += 1
        if seen[c["slice"]] <= 3:
            kept.append(c)
    return kept


def _baseline_cases() -> dict[str, str]:
    return json.loads((ROOT / BASELINE).read_text(encoding="utf-8"))["cases"]


def _failed_ids(result: pytest.RunResult) -> set[str]:
    return {r.nodeid for r in result.reprec.getreports("pytest_runtest_logreport") if r.failed}  # type: ignore[attr-defined]


def test_the_baseline_system_passes_with_the_baselines_failures_as_xfail(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess(
        *PLUGIN,
        "--evalkit",
        SUITE,
        "--evalkit-system",
        "baseline",
        "--evalkit-baseline",
        BASELINE,
        "--strict-markers",
    )
    known = sum(v != "pass" for v in _baseline_cases().values())
    # every case an item, plus the gate
    result.assert_outcomes(passed=len(_cases()) - known + 1, xfailed=known)
    assert result.ret == 0
    runs = list((project.path / "runs").iterdir())
    assert len(runs) == 1 and (runs[0] / "manifest.json").is_file()  # written as `evalkit run` writes it


def test_a_worse_system_fails_naming_the_flipped_cases_and_the_gate(project: pytest.Pytester) -> None:
    junit = project.path / "out.xml"
    result = project.runpytest_inprocess(
        *PLUGIN,
        "--evalkit",
        SUITE,
        "--evalkit-system",
        "worse.py:predict",
        "--evalkit-baseline",
        BASELINE,
        f"--junitxml={junit}",
    )
    baseline = _baseline_cases()
    flipped = {
        c["id"]
        for c in _cases()
        if c["input"].get("channel") == "chat" and baseline[c["id"]] == "pass" and c["expected"] != "other"
    }
    assert flipped
    assert _failed_ids(result) == {f"{SUITE}::{i}" for i in flipped} | {f"{SUITE}::[gate]"}
    assert result.ret == 1
    out = result.stdout.str()
    one = sorted(flipped)[0]
    assert f"case {one} fail (passed in the baseline" in out
    assert "exact exact: fail: expected" in out and 'output: "other"' in out
    assert "FAIL: the pass rate dropped" in out  # the gate's own words, as `evalkit gate` prints them
    # JUnit XML: one testcase per case, named by case id
    cases = ET.parse(junit).getroot().iter("testcase")
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failed == flipped | {"[gate]"}

    # --lf: only the cases that failed run again
    again = project.runpytest_inprocess(
        *PLUGIN,
        "--evalkit",
        SUITE,
        "--evalkit-system",
        "worse.py:predict",
        "--evalkit-baseline",
        BASELINE,
        "--lf",
    )
    again.assert_outcomes(failed=len(flipped) + 1, deselected=len(_cases()) + 1 - len(flipped) - 1)


def test_slices_are_markers_and_k_and_x_select(small_project: pytest.Pytester) -> None:
    project = small_project
    slices = Counter(c["slice"] for c in _small())
    result = project.runpytest_inprocess(
        *PLUGIN,
        "--evalkit",
        SUITE,
        "--evalkit-system",
        "baseline",
        "--evalkit-baseline",
        BASELINE,
        "-m",
        "sarcasm",
        "--strict-markers",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("xfailed", 0) == slices["sarcasm"]
    assert outcomes["deselected"] == len(_small()) + 1 - slices["sarcasm"]  # the gate item has no slice

    picked = project.runpytest_inprocess(
        *PLUGIN,
        "--evalkit",
        SUITE,
        "--evalkit-system",
        "worse.py:predict",
        "-k",
        "tri-00 or tri-13",
        "-x",
    )
    # no baseline given: the committed one is used; -x stops at the first failure
    assert picked.ret == 1
    assert len(_failed_ids(picked)) == 1


def test_ini_options_and_the_fixture(small_project: pytest.Pytester) -> None:
    project = small_project
    project.makeini(
        """
        [pytest]
        evalkit_system = baseline
        evalkit_runs_dir = elsewhere
        """
    )
    project.makepyfile(
        test_mine="""
        def test_triage(evalkit_run):
            run = evalkit_run("goldens/support-triage")
            assert run.pass_rate()["rate"][0] >= 0.6
            assert evalkit_run("goldens/support-triage") is run  # once per session
        """
    )
    result = project.runpytest_inprocess(*PLUGIN, "test_mine.py")
    result.assert_outcomes(passed=1)
    assert len(list((project.path / "elsewhere").iterdir())) == 1


def test_resume_finishes_the_given_run_instead_of_starting_one(small_project: pytest.Pytester) -> None:
    first = small_project.runpytest_inprocess(*PLUGIN, "--evalkit", SUITE, "--evalkit-system", "baseline")
    (run_dir,) = (small_project.path / "runs").iterdir()
    again = small_project.runpytest_inprocess(
        *PLUGIN, "--evalkit", SUITE, "--evalkit-system", "baseline", "--evalkit-resume", str(run_dir)
    )
    assert again.parseoutcomes() == first.parseoutcomes()
    assert list((small_project.path / "runs").iterdir()) == [run_dir]
    # a resumed run keeps its own settings: another system is a clear error on every item
    other = small_project.runpytest_inprocess(
        *PLUGIN, "--evalkit", SUITE, "--evalkit-system", "worse.py:predict", "--evalkit-resume", str(run_dir)
    )
    assert other.ret == 1 and "A resumed run keeps its own settings" in other.stdout.str()


def test_a_suite_that_cannot_load_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess(*PLUGIN, "--evalkit", "goldens/nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--evalkit goldens/nope" in result.stderr.str()


def test_a_judged_case_shows_the_unmet_criteria(
    pytester: pytest.Pytester,
    make_suite: Callable[..., Path],
    make_anthropic_server: Callable[..., LocalAnthropicServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rubric = ["States the refund window of 30 days"]
    cases = [
        {"id": f"q{i}", "input": f"Order {i}: how long is the refund window?", "slice": "direct",
         "checks": [{"kind": "judge", "name": "answer", "rubric": rubric}]}
        for i in range(3)
    ]  # fmt: skip
    answer = 'def predict(input):\n    return "Please write to us again and we will help."\n'
    suite = make_suite(
        cases, name="refund", toml='[judge]\nmodel = "claude-opus-4-6"\n', files={"s.py": answer}
    )
    server = make_anthropic_server(judge=SimulatedJudge(), simulated=True)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "local-test")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    result = pytester.runpytest_inprocess(
        *PLUGIN, "--evalkit", str(suite), "--evalkit-system", f"{suite}/s.py:predict", "--evalkit-judge", "on",
        "--evalkit-cache", "off",
    )  # fmt: skip
    result.assert_outcomes(failed=3)
    out = result.stdout.str()
    assert "judge answer: fail: 0/1 criteria met: not met: States the refund window of 30 days\n" in out
    assert "    judge: simulated judge (evalkit serve):" in out
    assert 'output: "Please write to us again and we will help."' in out


def test_a_slice_becomes_a_marker_minus_what_m_cannot_parse() -> None:
    from evalkit.pytest_plugin._plugin import marker_name

    assert marker_name("billing-vs-account") == "billing-vs-account"
    assert marker_name("long input: 2k+ tokens") == "long_input__2k__tokens"
