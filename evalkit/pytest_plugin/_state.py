"""What one pytest session knows: the suites (loaded once), their runs (run once), and the baselines' verdicts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from evalkit.errors import EvalkitError
from evalkit.pytest_plugin._settings import Settings

if TYPE_CHECKING:
    import polars as pl

    from evalkit.api import Run
    from evalkit.suite import Suite

OUTPUT_CHARS = 1000
"""How much of a failing case's output the failure shows."""


@dataclass(frozen=True)
class CaseOutcome:
    status: str
    """pass (every repeat passed), fail, error, or not_scored."""
    baseline_failed: bool
    """The case failed (or errored) in the baseline too: a known failure."""
    why: str


class SessionState:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._suites: dict[str, Suite] = {}
        self._runs: dict[tuple[str, str | None], Run | EvalkitError] = {}
        self._baseline_fails: dict[str, dict[str, bool]] = {}
        self._case_statuses: dict[str, dict[str, set[str]]] = {}
        self._failures: dict[str, pl.DataFrame] = {}

    # -- suites ---------------------------------------------------------------------------------------------

    def suite(self, suite: str) -> Suite:
        if suite not in self._suites:
            from evalkit.suite import load_suite

            try:
                self._suites[suite] = load_suite(Path(suite))
            except EvalkitError as e:
                raise pytest.UsageError(f"--evalkit {suite}: {e}") from e
        return self._suites[suite]

    def slices(self, suite: str) -> list[str]:
        return sorted({c.slice for c in self.suite(suite).cases if c.slice})

    def cases(self, suite: str) -> list[tuple[str, str | None]]:
        return [(c.id, c.slice) for c in self.suite(suite).cases]

    def suite_path(self, suite: str) -> Path:
        return Path(suite)

    def baseline_for(self, suite: str) -> str | Path | None:
        """The baseline given, else the suite's committed baseline.json, else None (no xfail, no gate item)."""
        if self.settings.baseline:
            return self.settings.baseline
        from evalkit.api import committed_baseline

        return committed_baseline(suite)

    # -- runs -----------------------------------------------------------------------------------------------

    def run(self, suite: str, system: str | None = None) -> Run:
        """The suite's run in this session, made on first use through the front door (`evalkit.api.run`)."""
        chosen = system if system is not None else self.settings.system
        key = (str(Path(suite).resolve()), chosen)
        if key not in self._runs:
            from evalkit.api import run

            s = self.settings
            try:
                if s.resume is not None and self._resumes(suite):
                    from evalkit.api import resume

                    self._runs[key] = resume(
                        s.resume, system=chosen, concurrency=s.concurrency, progress=False
                    )
                else:
                    self._runs[key] = run(
                        self.suite(suite),
                        chosen,
                        repeats=s.repeats,
                        concurrency=s.concurrency,
                        cache=s.cache,  # type: ignore[arg-type]
                        judge=s.judge,  # type: ignore[arg-type]
                        runs_dir=s.runs_dir,
                        progress=False,
                    )
            except EvalkitError as e:
                self._runs[key] = e  # every item of the suite fails with it, not only the first
        made = self._runs[key]
        if isinstance(made, EvalkitError):
            raise made
        return made

    def _resumes(self, suite: str) -> bool:
        """Whether the run to resume is a run of `suite` (with several suites, it finishes its own)."""
        from evalkit.api import load_run

        assert self.settings.resume is not None
        recorded = Path(load_run(self.settings.resume).manifest.suite_path)
        return recorded.resolve() == Path(suite).resolve()

    def case(self, suite: str, case_id: str) -> CaseOutcome:
        """The case's verdict over its repeats, and whether the baseline failed it too."""
        statuses = self._statuses(suite).get(case_id, set())
        if not statuses:
            return CaseOutcome("not_scored", False, "the run has no verdict for this case")
        status: str = next((s for s in ("error", "fail") if s in statuses), "")
        if not status:
            status = "pass" if statuses == {"pass"} else "not_scored"
        if status == "not_scored":
            return CaseOutcome(
                status, False, "no check could give a verdict (a judged check with the judge off?)"
            )
        baseline = self.baseline_for(suite)
        failed_before = self._baseline_failures(suite).get(case_id, False) if baseline is not None else False
        why = (
            f"baseline {baseline}"
            if failed_before
            else "passed in the baseline"
            if baseline
            else "no baseline"
        )
        return CaseOutcome(status, failed_before, why)

    def _statuses(self, suite: str) -> dict[str, set[str]]:
        """Per case of the suite's run, the verdicts of its repeats (read once, not once per item)."""
        if suite not in self._case_statuses:
            out: dict[str, set[str]] = {}
            for case_id, status in self.run(suite).verdicts().select("case_id", "status").iter_rows():
                out.setdefault(case_id, set()).add(status)
            self._case_statuses[suite] = out
        return self._case_statuses[suite]

    def failures(self, suite: str) -> pl.DataFrame:
        """The run's failing cases with their checks and outputs (`Run.failures`), read once."""
        if suite not in self._failures:
            self._failures[suite] = self.run(suite).failures()
        return self._failures[suite]

    def _baseline_failures(self, suite: str) -> dict[str, bool]:
        """Per case of the baseline: did it fail or error (in any repeat it keeps)."""
        if suite not in self._baseline_fails:
            from evalkit._baseline import load_reference

            baseline = self.baseline_for(suite)
            assert baseline is not None
            verdicts = load_reference(Path(baseline)).verdicts
            out: dict[str, bool] = {}
            for case_id, status in verdicts.select("case_id", "status").iter_rows():
                out[case_id] = out.get(case_id, False) or status in ("fail", "error")
            self._baseline_fails[suite] = out
        return self._baseline_fails[suite]


def _clip(text: str, limit: int = OUTPUT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def failure_text(run: Run, failures: pl.DataFrame, case_id: str, outcome: CaseOutcome) -> str:
    """What the terminal summary shows for a failing case: each check's verdict and detail, the judge's unmet
    criteria, and the output (clipped), for each failing repeat (`failures` is the run's `Run.failures`)."""
    import polars as pl

    rows = failures.filter(pl.col("case_id") == case_id)
    lines = [f"case {case_id} {outcome.status} ({outcome.why}; run {run.path})"]
    for r in rows.iter_rows(named=True):
        slice_name = r.get("slice") or "-"
        head = f"repeat {r['repeat']}, slice {slice_name}: {r['status']}"
        lines.append(head)
        if r.get("error"):
            lines.append(f"  error: {r['error']}")
        for c in r.get("checks") or []:
            lines.extend(_check_lines(c))
        output = r.get("output")
        lines.append(f"  output: {_clip(str(output)) if output is not None else '(none)'}")
    return "\n".join(lines)


def _check_lines(c: dict[str, Any]) -> list[str]:
    name = str(c.get("check_name")) + (f" [{c['check_field']}]" if c.get("check_field") else "")
    detail = c.get("error") or c.get("detail") or ""
    out = [f"  {c.get('check_kind')} {name}: {c.get('status')}" + (f": {detail}" if detail else "")]
    for x in c.get("judge_criteria") or []:
        if not x.get("met"):
            evidence = x.get("evidence")
            if not evidence and str(x.get("criterion")) in out[0]:
                continue  # the check's line says it already
            shown = f" (evidence: {json.dumps(evidence, ensure_ascii=False)})" if evidence else ""
            out.append(f"    not met: {x.get('criterion')}{shown}")
    if c.get("judge_reasoning") and c.get("status") != "pass":
        out.append(f"    judge: {_clip(str(c['judge_reasoning']), 400)}")
    return out
