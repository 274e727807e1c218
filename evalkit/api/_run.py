"""`Run`: one run directory as a notebook reads it — frames, rates, failures, a comparison and the report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalkit._gate import DEFAULT_MAX_DROP
from evalkit._results import RunFolder
from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import polars as pl

    from evalkit._ab import ABResult
    from evalkit._gate import GateOutcome
    from evalkit.api._compare import RunComparison
    from evalkit.api._html import HTMLReport
    from evalkit.calibration import JudgeTrust

By = str | list[str] | None


class Run(RunFolder):
    """A finished (or interrupted) run, read from its directory.

    Every frame is computed from ``results.parquet`` (or the journal) the first time it is asked for.
    """

    # -- what the run was ---------------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.manifest.run_id

    @property
    def status(self) -> str:
        return self.manifest.status

    @property
    def repeats(self) -> int:
        return self.manifest.repeats

    # -- frames ---------------------------------------------------------------------------------------------

    def verdicts(self) -> pl.DataFrame:
        """One row per (case, repeat): the case's verdict (pass, fail, error, not_scored), cost and latency."""
        return self._verdicts

    @cached_property
    def _verdicts(self) -> pl.DataFrame:
        from evalkit.stats import case_verdicts

        return case_verdicts(self.checks())

    def pass_rate(self, *, by: By = None, confidence: float = 0.95) -> pl.DataFrame:
        """The pass rate with its interval, overall or per group (``by="slice"``).

        With repeats the standard error is clustered by case (repeats of one case are not independent).

        Parameters
        ----------
        by:
            A verdict column (or list of them) to group by, e.g. ``"slice"`` or ``"split"``.
        confidence:
            The interval's confidence level.

        Returns
        -------
        polars.DataFrame
            One row per group (its `by` columns; overall: a ``group`` column reading ``all``): n, passes,
            rate, ci_low, ci_high, errors, not_scored (and the clustered columns when the run has repeats).
        """
        from evalkit.stats import clustered_pass_rate, pass_rate

        verdicts = self.verdicts()
        if self.repeats > 1:
            rates = clustered_pass_rate(verdicts, by=by, confidence=confidence)
        else:
            rates = pass_rate(verdicts, by=by, confidence=confidence)
        # grouped by named columns, those columns say the group: the joined label would repeat them
        return rates.drop("group") if by is not None else rates

    def failures(self) -> pl.DataFrame:
        """Every failing or errored (case, repeat): its input, output, error and every check's verdict.

        Columns: case_id, slice, repeat, status, input (JSON text), output (JSON text), error, and ``checks``,
        a list of structs (kind, name, field, status, passed, score, detail, error, error_kind, judge_reasoning,
        judge_criteria).
        """
        import polars as pl

        verdicts = self.verdicts().filter(pl.col("status").is_in(["fail", "error"]))
        rows = self.checks()
        detail = [
            c
            for c in (
                "check_kind",
                "check_name",
                "check_field",
                "status",
                "passed",
                "score",
                "detail",
                "error",
                "error_kind",
                "judge_reasoning",
                "judge_criteria",
            )
            if c in rows.columns
        ]
        per_case = (
            rows.sort("check_index")
            .group_by("case_id", "repeat", maintain_order=True)
            .agg(
                pl.col("output").first(),
                pl.col("case_error").first().alias("error"),
                pl.struct(detail).alias("checks"),
            )
        )
        inputs = self._inputs(verdicts.get_column("case_id").unique().to_list())
        input_frame = pl.DataFrame(
            {"case_id": list(inputs), "input": [json.dumps(v, ensure_ascii=False) for v in inputs.values()]},
            schema={"case_id": pl.String, "input": pl.String},
        )
        return (
            verdicts.select("case_id", "slice", "repeat", "status")
            .join(per_case, on=["case_id", "repeat"], how="left")
            .join(input_frame, on="case_id", how="left")
            .select("case_id", "slice", "repeat", "status", "input", "output", "error", "checks")
            .sort("slice", "case_id", "repeat")
        )

    def tool_calls(self) -> pl.DataFrame:
        """Every tool call the outputs record, in the order made: one row per (case, repeat, call).

        Columns: case_id, slice, repeat, call (0, 1, ...), tool, arguments and result (JSON text). Empty for a
        suite whose outputs record no calls (see docs/case-format.md, Tools).
        """
        import polars as pl

        from evalkit.graders import tool_calls as recorded_calls

        first = self.checks().unique(["case_id", "repeat"], keep="first", maintain_order=True)
        rows = []
        for case_id, slice_, repeat, text in first.select("case_id", "slice", "repeat", "output").iter_rows():
            try:
                output = json.loads(text) if text is not None else None
            except ValueError:
                continue
            calls = output.get("tool_calls") if isinstance(output, dict) else None
            if recorded_calls(output) is None or not isinstance(calls, list):
                continue
            for index, call in enumerate(calls):
                arguments = call.get("arguments", call.get("input", {}))
                rows.append(
                    (
                        case_id,
                        slice_,
                        repeat,
                        index,
                        call.get("name"),
                        json.dumps(arguments, ensure_ascii=False),
                        json.dumps(call.get("result"), ensure_ascii=False),
                    )
                )
        schema = {"case_id": pl.String, "slice": pl.String, "repeat": pl.Int64, "call": pl.Int64, "tool": pl.String,
                  "arguments": pl.String, "result": pl.String}  # fmt: skip
        return pl.DataFrame(rows, schema=schema, orient="row")

    def _inputs(self, ids: list[str]) -> dict[str, Any]:
        wanted = set(ids)
        try:
            cases = self.suite.cases
        except EvalkitError:  # the suite moved or changed shape since the run: the rest still shows
            return {}
        return {c.id: c.input for c in cases if c.id in wanted}

    # -- against another run --------------------------------------------------------------------------------

    def compare(self, other: Run | str | Path) -> RunComparison:
        """This run against a reference: another `Run`, a run directory, a baseline.json or a suite folder."""
        from evalkit.api._compare import compare

        return compare(self, other)

    def ab(
        self,
        other: Run | str | Path,
        *,
        check: str | None = None,
        criteria: Sequence[str] = (),
        judge_model: str | None = None,
        cache: str = "readwrite",
        cache_dir: str | Path | None = None,
        concurrency: int = 8,
        max_retries: int = 4,
    ) -> ABResult:
        """Is `other` (B) better than this run (A)? As ``evalkit ab A B``: on every case both answered, the
        pairwise judge sees both outputs in both orders (through the response cache); code checks decide first.

        Parameters
        ----------
        other:
            Run B: a `Run` or a run directory of the same suite.
        check:
            Judge on this judge check's rubric only (default: every judge check of the case).
        criteria:
            Judge on these criteria instead of the suite's rubric.
        judge_model:
            The pairwise judge's model (default: the suite's judge model).
        cache, cache_dir, concurrency, max_retries:
            As for `evalkit.api.run`.

        Returns
        -------
        ABResult
            ``.to_json()`` (n, wins_b, wins_a, ties, win_rate_b with its Wilson interval, consistency, the sign
            test's p_value, by_slice), ``.text()`` (what the command prints) and ``.cases`` (one row per case).
        """
        from evalkit._ab import ab

        return ab(
            self,
            other if isinstance(other, Run) else Run(other),
            check=check,
            criteria=tuple(criteria),
            judge_model=judge_model,
            cache=cache,
            cache_dir=cache_dir,
            concurrency=concurrency,
            max_retries=max_retries,
        )

    def cost_latency(self) -> pl.DataFrame:
        """Cost per task (system and judge) and latency percentiles (p50, p95), one row for the run."""
        from evalkit.stats import cost_latency

        return cost_latency(self.checks()).by_run

    def gate(
        self,
        baseline: Run | str | Path | None = None,
        *,
        max_drop: float = DEFAULT_MAX_DROP,
        require_significant: bool = False,
        allow_unscored: int = 0,
        allow_version_change: bool = False,
        require_calibrated: bool = False,
        junit: str | Path | None = None,
    ) -> GateOutcome:
        """The regression gate against `baseline` (default: the suite's committed baseline.json), as
        ``evalkit gate`` decides it; the options are ``evalkit.api.gate``'s.

        Returns the outcome: ``.decision`` (``.verdict``, ``.failed`` and the numbers), ``.exit_code`` (as
        ``evalkit gate``) and ``.text`` (what it prints).
        """
        from evalkit.api._gate import gate

        return gate(
            self,
            baseline,
            max_drop=max_drop,
            require_significant=require_significant,
            allow_unscored=allow_unscored,
            allow_version_change=allow_version_change,
            require_calibrated=require_calibrated,
            junit=junit,
        )

    def _committed_baseline(self) -> Path | None:
        from evalkit.api._reference import committed_baseline

        return committed_baseline(self.manifest.suite_location())

    def report(
        self,
        *,
        baseline: Run | str | Path | None = None,
        labels: str | Path | Sequence[str | Path] | None = None,
        gate: GateOutcome | None = None,
        max_flipped: int = 200,
        compare: bool = True,
    ) -> HTMLReport:
        """The report, as ``evalkit report`` makes it: shown inline in Jupyter, ``.save(path)`` writes the HTML
        page, ``.text()`` is what the command prints.

        Parameters
        ----------
        baseline:
            What to compare with: a `Run`, a run directory, a baseline.json or a suite folder (default: the
            suite's baseline.json, when there is one).
        labels:
            Human labels of the run's outputs, for the judged checks' corrected pass rates (default: every
            ``*.jsonl`` in the suite's labels/ folder).
        gate:
            A gate verdict on this run (`Run.gate`), shown at the top of the page.
        max_flipped:
            Flipped cases listed in the page, regressions first (the count is always shown).
        compare:
            False: the run alone, with no comparison (`baseline` must then be None).
        """
        from evalkit.api._html import report

        if not compare and baseline is not None:
            raise EvalkitError("give a baseline to compare with, or compare=False (--no-baseline), not both")
        return report(
            self,
            baseline,
            judge=self.judge_trust(labels=labels),
            gate=gate,
            max_flipped=max_flipped,
            compare=compare,
        )

    def summary(self, *, show_failures: int | Literal["all"] = 10) -> str:
        """The terminal summary ``evalkit run`` prints: pass rate with interval, errors, the failing cases (up
        to `show_failures`, or ``"all"``) with what failed, the judge's calibration state, cost and latency."""
        from evalkit._report import format_summary
        from evalkit._results import judge_criteria, prompt_cache_use

        return format_summary(
            self.manifest,
            self.checks(),
            show_failures=show_failures,
            criteria=judge_criteria(self.path),
            judge=self.judge_trust(),
            prompt_cache=prompt_cache_use(self.path, self.manifest),
        )

    @property
    def errored_cases(self) -> int:
        """How many (case, repeat) pairs ended in an error (``resume`` runs them again)."""
        import polars as pl

        return self.checks().filter(pl.col("case_status") == "error").select("case_id", "repeat").n_unique()

    def failed_because(self, *, fail_on_error: bool = False) -> str | None:
        """Why this run counts as failed though no gate was asked for, or None.

        A run that scored nothing because every check errored measured nothing: a pass rate over no cases must
        not read as a green build. Some errors among scored cases are listed and resumable, so they fail the run
        only when asked (`fail_on_error`, ``--fail-on-error``).
        """
        statuses = self.checks().get_column("status")
        scored = int(statuses.is_in(["pass", "fail"]).sum())
        if scored == 0 and int((statuses == "error").sum()) > 0:
            return "no check could be scored: every check errored (the errors are listed above)"
        errored = self.errored_cases
        if fail_on_error and errored:
            cases = f"{errored} case{'s' if errored > 1 else ''}"
            return f"{cases} ended in an error and --fail-on-error was given"
        return None

    @property
    def baseline_path(self) -> Path | None:
        """The suite's committed baseline.json, or None when it has none."""
        return self._committed_baseline()

    def judge_trust(self, *, labels: str | Path | Sequence[str | Path] | None = None) -> JudgeTrust | None:
        """Whether the judge is calibrated, and each judged check's judge-only and corrected pass rates.

        Parameters
        ----------
        labels:
            Human labels of the run's outputs (default: every ``*.jsonl`` in the suite's labels/ folder).

        Returns
        -------
        JudgeTrust, or None when the run has no judged check. Missing, stale or unreadable labels are stated
        in it, never raised.
        """
        if labels is None:
            return self._default_trust
        return self._trust(labels)

    @cached_property
    def _default_trust(self) -> JudgeTrust | None:
        return self._trust(None)

    def _trust(self, labels: str | Path | Sequence[str | Path] | None) -> JudgeTrust | None:
        judged = self.checks().get_column("tier") == "judge"
        if not judged.any():  # a run with no judged check imports no calibration
            return None
        from evalkit.calibration import judge_trust

        try:
            suite = self.suite
        except EvalkitError:
            suite = None  # judge_trust says the suite could not be read
        return judge_trust(
            self.checks(), suite=suite, suite_path=self.manifest.suite_location(), labels=labels
        )

    # -- display ----------------------------------------------------------------------------------------------

    def _headline(self) -> dict[str, Any]:
        import polars as pl

        overall = self.pass_rate().row(0, named=True)
        v = self.verdicts()
        cost = v.get_column("cost_usd") if "cost_usd" in v.columns else pl.Series([], dtype=pl.Float64)
        latency = v.get_column("latency_s") if "latency_s" in v.columns else pl.Series([], dtype=pl.Float64)
        p95 = latency.drop_nulls().quantile(0.95, "nearest") if latency.drop_nulls().len() else None
        return {
            "n": overall["n"],
            "passes": overall["passes"],
            "rate": overall["rate"],
            "ci_low": overall["ci_low"],
            "ci_high": overall["ci_high"],
            "errors": overall["errors"],
            "not_scored": overall["not_scored"],
            "cost": None if cost.null_count() else float(cost.sum()),
            "p95": p95,
        }

    def __str__(self) -> str:
        """What ``evalkit run`` prints for it: ``print(run)`` shows the summary."""
        return self.summary(show_failures=5)

    def __repr__(self) -> str:
        m = self.manifest
        return f"Run({self.location!r}: suite {m.suite} {m.suite_version}, system {m.system.get('name')}, {m.status})"

    def _repr_html_(self) -> str:
        from evalkit.api._html import summary_card

        return summary_card(self)


def load_run(path: str | Path) -> Run:
    """The run in `path` (a folder `evalkit run` or `ek.run` wrote)."""
    return Run(path)
