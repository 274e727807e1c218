"""The pytest hooks: options, markers, one item per case plus a gate item per suite, and the fixture.

Each suite runs once per pytest session, through the front door (`evalkit.api.run`: the response cache,
concurrency, repeats, the run directory as ``evalkit run`` writes it), the first time one of its items runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from evalkit.pytest_plugin._settings import settings_of
from evalkit.pytest_plugin._state import SessionState, failure_text

if TYPE_CHECKING:
    from evalkit.api import Run

_STATE = pytest.StashKey[SessionState]()
GATE_ITEM = "[gate]"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evalkit", "evalkit: eval suites as tests (see docs/pytest.md)")
    group.addoption(
        "--evalkit",
        action="append",
        default=[],
        dest="evalkit_suites",
        metavar="SUITE",
        help="collect one test per case of this suite (a folder or cases file); may be given more than once",
    )
    group.addoption(
        "--evalkit-system",
        dest="evalkit_system",
        metavar="S",
        help="the system to run: baseline, claude, module:function or file.py:function (default: the suite's)",
    )
    group.addoption(
        "--evalkit-baseline",
        dest="evalkit_baseline",
        metavar="B",
        help="a baseline.json, run directory or suite folder: its failing cases are xfail, and a gate item "
        "fails on a regression (default: the suite's committed baseline.json, if any)",
    )
    group.addoption(
        "--evalkit-judge",
        dest="evalkit_judge",
        choices=["auto", "on", "off"],
        help="judged checks: auto (when a judge is configured), on or off (default auto)",
    )
    group.addoption(
        "--evalkit-runs-dir",
        dest="evalkit_runs_dir",
        metavar="DIR",
        help="where run directories go (default: runs/ under the pytest rootdir)",
    )
    group.addoption("--evalkit-repeats", dest="evalkit_repeats", type=int, metavar="N", help="runs per case")
    group.addoption(
        "--evalkit-concurrency", dest="evalkit_concurrency", type=int, metavar="N", help="requests at once"
    )
    group.addoption(
        "--evalkit-cache",
        dest="evalkit_cache",
        choices=["readwrite", "replay", "refresh", "off"],
        help="the response cache mode (default readwrite)",
    )
    group.addoption(
        "--evalkit-resume",
        dest="evalkit_resume",
        metavar="RUN_DIR",
        help="finish this interrupted run (or run its errored cases again) instead of starting one, for the "
        "suite it is a run of",
    )
    parser.addini("evalkit_suites", "suites collected as tests, one a line", type="linelist", default=[])
    parser.addini("evalkit_system", "the system to run (as --evalkit-system)", default="")
    parser.addini("evalkit_baseline", "the baseline (as --evalkit-baseline)", default="")
    parser.addini("evalkit_judge", "auto, on or off (as --evalkit-judge)", default="")
    parser.addini("evalkit_runs_dir", "where run directories go (as --evalkit-runs-dir)", default="")
    parser.addini("evalkit_repeats", "runs per case (as --evalkit-repeats)", default="")
    parser.addini("evalkit_concurrency", "requests at once (as --evalkit-concurrency)", default="")
    parser.addini("evalkit_cache", "the response cache mode (as --evalkit-cache)", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "evalkit: a case or the gate of an evalkit suite (pytest --evalkit)")
    settings = settings_of(config)
    state = SessionState(settings)
    config.stash[_STATE] = state
    for suite in settings.suites:
        # -m and --strict-markers see each slice as a registered marker
        for name in state.slices(suite):
            config.addinivalue_line("markers", f"{marker_name(name)}: evalkit slice {name}")


def marker_name(slice_name: str) -> str:
    """A slice as a marker: characters `-m` cannot parse (spaces, colons, ...) become underscores."""
    return re.sub(r"[^\w.-]", "_", slice_name)


class _CaseFailed(Exception):
    """A case that failed (or errored), with what the terminal summary shows for it."""


class SuiteCollector(pytest.Collector):
    """A suite's items: one per case (named by case id) and the gate."""

    def __init__(self, *, suite: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite

    def collect(self) -> Iterator[pytest.Item]:
        state = self.config.stash[_STATE]
        for case_id, slice_name in state.cases(self.suite):
            item = CaseItem.from_parent(
                self, name=case_id, suite=self.suite, nodeid=f"{self.nodeid}::{case_id}"
            )
            item.add_marker("evalkit")
            if slice_name:
                item.add_marker(marker_name(slice_name))
            yield item
        if state.baseline_for(self.suite) is not None:
            gate = GateItem.from_parent(
                self, name=GATE_ITEM, suite=self.suite, nodeid=f"{self.nodeid}::{GATE_ITEM}"
            )
            gate.add_marker("evalkit")
            yield gate


class _EvalkitItem(pytest.Item):
    def __init__(self, *, suite: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite

    @property
    def state(self) -> SessionState:
        return self.config.stash[_STATE]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from evalkit.errors import EvalkitError

        # no traceback: it would show the plugin's code, not the case (and formatting one costs ~0.3 s)
        if isinstance(excinfo.value, _CaseFailed | EvalkitError | pytest.xfail.Exception):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.state.suite_path(self.suite), None, f"evalkit {self.nodeid}"


class CaseItem(_EvalkitItem):
    """One case: passes when every repeat passed; xfail when it fails in the baseline too."""

    def runtest(self) -> None:
        outcome = self.state.case(self.suite, self.name)
        if outcome.status == "pass":
            return
        if outcome.status == "not_scored":
            pytest.skip(f"not scored: {outcome.why}")
        if outcome.baseline_failed:
            pytest.xfail(f"known failure: fails in the baseline too ({outcome.why})")
        run = self.state.run(self.suite)
        raise _CaseFailed(failure_text(run, self.state.failures(self.suite), self.name, outcome))


class GateItem(_EvalkitItem):
    """The regression gate on the suite's run, as ``evalkit gate`` decides it (fails closed)."""

    def runtest(self) -> None:
        run = self.state.run(self.suite)
        decision = run.gate(self.state.baseline_for(self.suite))
        if decision.exit_code:
            raise _CaseFailed(f"evalkit gate failed for {self.suite} (run {run.path}):\n{decision.text}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # tryfirst: the items are in the list before -k, -m and --lf select from it
    state = config.stash[_STATE]
    for suite in state.settings.suites:
        collector = SuiteCollector.from_parent(session, name=suite, suite=suite, nodeid=suite)
        items.extend(collector.collect())


@pytest.fixture(scope="session")
def evalkit_run(pytestconfig: pytest.Config) -> Callable[..., Run]:
    """A function running a suite once per session through the front door: ``evalkit_run("goldens/x")``.

    Takes the suite and optionally ``system=``; the other settings are the plugin's (judge, runs dir,
    repeats, cache). The same suite and system asked twice, or also collected with ``--evalkit``, is one run.
    """
    state = pytestconfig.stash[_STATE]

    def run(suite: str | Path, system: str | None = None) -> Run:
        return state.run(str(suite), system)

    return run
