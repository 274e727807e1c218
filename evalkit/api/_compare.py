"""`RunComparison`: a run against a reference run or baseline, as frames a notebook can filter and chart."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from evalkit._baseline import RunInfo
    from evalkit._report import Comparison
    from evalkit.api._run import Run


@dataclass(frozen=True, eq=False)
class RunComparison:
    """Run B (this run) against A (the reference), paired on the cases both scored."""

    comparison: Comparison
    info: RunInfo | None = None
    """Run B's identity (its setup), for `changes`."""
    rows: pl.DataFrame | None = None
    """Run B's check rows, for `flipped_outputs`."""

    @property
    def run_a(self) -> str:
        return self.comparison.run_a

    @property
    def run_b(self) -> str:
        return self.comparison.run_b

    def summary(self) -> dict[str, Any]:
        """The paired difference B - A: n, rates, diff with interval, flips, McNemar's exact p on the majority
        verdicts, and the paired test that decides significance (``test``: "mcnemar" with one repeat, "sign-flip"
        on case pass rates with repeats) with its ``p`` and ``significant``."""
        p = self.comparison.paired
        return {
            "run_a": p.run_a,
            "run_b": p.run_b,
            "n": p.n,
            "rate_a": p.rate_a,
            "rate_b": p.rate_b,
            "diff": p.diff,
            "ci_low": p.ci_low,
            "ci_high": p.ci_high,
            "pass_to_fail": p.only_a,
            "fail_to_pass": p.only_b,
            "mcnemar_p": p.mcnemar_exact_p,
            "test": p.test,
            "p": p.p,
            "significant": p.significant,
            "missing_in_a": len(p.missing_in_a),
            "missing_in_b": len(p.missing_in_b),
            "unscored": len(p.unscored),
        }

    def flipped(self) -> pl.DataFrame:
        """The cases whose verdict changed: case_id, slice, direction (pass->fail or fail->pass, from A to B),
        ``mean_a`` (the pass rate of the case over the repeats of A, the run compared against) and ``mean_b`` (of B,
        this run)."""
        return self.comparison.paired.flipped

    def flipped_outputs(self) -> pl.DataFrame:
        """The flipped cases with what each side said, from each side's first repeat.

        Returns
        -------
        polars.DataFrame
            The columns of `flipped` and, for A (the reference) and B: status_a/_b, output_a/_b (JSON text,
            as in `Run.checks`), error_a/_b, and output_clipped_a (True when a baseline.json cut A's output to
            its cap). A's columns are null when A is a baseline.json that stores no outputs;
            `outputs_note` says why.
        """
        import polars as pl

        flipped = self.flipped()
        ref = self.comparison.reference
        b = _first_repeat(self.rows, "_b") if self.rows is not None else None
        a = _first_repeat(ref.output_rows, "_a") if ref.output_rows is not None else None
        out = flipped
        for side, suffix in ((a, "_a"), (b, "_b")):
            if side is None:
                side = pl.DataFrame(
                    schema={"case_id": pl.String}
                    | {f"{c}{suffix}": pl.String for c in ("status", "output", "error")}
                    | {f"output_clipped{suffix}": pl.Boolean}
                )
            out = out.join(side, on="case_id", how="left")
        return out.drop("output_clipped_b")

    @property
    def outputs_note(self) -> str | None:
        """Why the reference side has no outputs (a baseline.json that stores none), or None."""
        return self.comparison.reference.outputs_note

    def slices(self) -> pl.DataFrame:
        """The paired change per slice: n, both rates, diff with interval, flips, McNemar p, the paired test's p
        and whether it is significant."""
        return self.comparison.slices

    def warnings(self) -> list[str]:
        """Model drift and suite-version messages: what may explain a change other than yours; and a baseline
        that keeps only majority verdicts of a run with repeats, which limits the comparison."""
        c = self.comparison
        return [*c.drift, *([c.version_warning] if c.version_warning else []), *([c.note] if c.note else [])]

    def changes(self) -> pl.DataFrame:
        """Every part of the setup before (A) and after (B): what, before, after, changed.

        Parts: suite version, system, system prompt, system model (requested and resolved), system code, judge
        model, judge prompt, resolved judge model (see `evalkit.api.setup_changes`).
        """
        from evalkit.api._changes import setup_changes

        if self.info is None:
            raise ValueError(
                "this comparison was made without run B's setup; make it with run.compare(other)"
            )
        return setup_changes(self.comparison.reference.info, self.info)

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"RunComparison(B {s['run_b']} vs A {s['run_a']}: {s['rate_b']:.1%} vs {s['rate_a']:.1%} on {s['n']} "
            f"cases, {s['pass_to_fail']} pass->fail, {s['fail_to_pass']} fail->pass)"
        )

    def _repr_html_(self) -> str:
        from evalkit.api._html import comparison_card

        return comparison_card(self)


def compare(run: Run, other: Run | str | Path) -> RunComparison:
    """`run` (B) against `other` (A)."""
    from evalkit._baseline import run_info
    from evalkit._report import compare as compare_verdicts
    from evalkit.api._reference import reference_of

    rows = run.checks()
    info = run_info(run.manifest, rows)
    return RunComparison(compare_verdicts(info, run.verdicts(), reference_of(other)), info, rows)


def _first_repeat(rows: pl.DataFrame, suffix: str) -> pl.DataFrame:
    """One row per case: its first repeat's status, output, error and clip flag, the columns suffixed."""
    import polars as pl

    clipped = pl.col("output_clipped") if "output_clipped" in rows.columns else pl.lit(False)
    return (
        rows.filter(pl.col("repeat") == pl.col("repeat").min().over("case_id"))
        .group_by("case_id", maintain_order=True)
        .agg(
            pl.col("case_status").first().alias(f"status{suffix}"),
            pl.col("output").first().alias(f"output{suffix}"),
            pl.col("case_error").first().alias(f"error{suffix}"),
            clipped.first().fill_null(False).alias(f"output_clipped{suffix}"),
        )
    )
