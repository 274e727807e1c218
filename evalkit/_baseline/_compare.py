"""The paired comparison of a run with its reference: the change, per slice, and what makes it suspect.

Model drift comes first, because a difference measured across two resolved model versions is not a
difference our change made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from evalkit._baseline._info import VERDICT_COLUMNS, RunInfo, majority_verdicts
from evalkit._baseline._reference import Reference
from evalkit.errors import EvalkitError
from evalkit.stats import PairedComparison, compare_runs


@dataclass(frozen=True, eq=False)
class Comparison:
    """This run (B) against its reference (A), on the case ids both hold."""

    reference: Reference
    run_a: str
    run_b: str
    paired: PairedComparison
    slices: pl.DataFrame
    drift: list[str]
    version_warning: str | None
    verdicts: pl.DataFrame
    changes: list[str] = field(default_factory=list)
    """What differs between the two runs' setups: suite version, system, prompt, model, code, judge."""
    note: str | None = None
    """How the reference limited the comparison (a baseline.json that keeps only majority verdicts of a run
    with repeats), and what to do about it."""

    @property
    def drop(self) -> float:
        """How far the pass rate fell (positive) or rose (negative), on shared scored cases."""
        return -self.paired.diff


def model_drift(a: RunInfo, b: RunInfo) -> list[str]:
    """Messages when two runs of one suite version and one prompt resolved to different model versions."""
    if a.suite_version != b.suite_version or a.prompt_hash != b.prompt_hash:
        return []
    out = []
    for who, va, vb in (
        ("system", a.system_model_versions, b.system_model_versions),
        ("judge", a.judge_model_versions, b.judge_model_versions),
    ):
        if va and vb and set(va) != set(vb):
            out.append(
                f"MODEL DRIFT: same suite version {b.suite_version} and system prompt"
                f"{f' {b.prompt_hash}' if b.prompt_hash else ''}, but the {who} model resolved to "
                f"{', '.join(va)} in {a.run_id} and to {', '.join(vb)} in {b.run_id}. "
                f"Part or all of any difference below may be the model's, not a change of yours."
            )
    return out


def run_changes(a: RunInfo, b: RunInfo) -> list[str]:
    """What changed from run A's setup to run B's, one line each; a side that did not record a field is
    not taken to have changed it."""
    out = []

    def differ(what: str, x: object, y: object) -> None:
        if x is not None and y is not None and x != y:
            out.append(f"{what}: {x} -> {y}")

    differ("suite version", a.suite_version, b.suite_version)
    differ("system", a.system_name, b.system_name)
    differ("system prompt (hash)", a.prompt_hash, b.prompt_hash)
    differ("system model", a.system_model, b.system_model)
    if (
        a.system_model_versions
        and b.system_model_versions
        and set(a.system_model_versions) != set(b.system_model_versions)
    ):
        out.append(
            f"resolved system model: {', '.join(a.system_model_versions)} -> {', '.join(b.system_model_versions)}"
        )
    differ("system code (hash)", a.code_hash, b.code_hash)
    differ("judge model", a.judge_model, b.judge_model)
    differ("judge prompt (hash)", a.judge_prompt_hash, b.judge_prompt_hash)
    if (
        a.judge_model_versions
        and b.judge_model_versions
        and set(a.judge_model_versions) != set(b.judge_model_versions)
    ):
        out.append(
            f"resolved judge model: {', '.join(a.judge_model_versions)} -> {', '.join(b.judge_model_versions)}"
        )
    return out


def version_warning(a: RunInfo, b: RunInfo, shared: int) -> str | None:
    if a.suite_version == b.suite_version:
        return None
    return (
        f"suite version differs: the baseline was scored against {a.suite_version}, this run against "
        f"{b.suite_version}. A score belongs to its version; comparing only the {shared} case ids both "
        f"share (a case whose expected answer changed still compares as the same case)."
    )


def slice_deltas(verdicts: pl.DataFrame, run_a: str, run_b: str) -> pl.DataFrame:
    """Per-slice paired comparison of B against A (``compare_runs`` on each slice's cases).

    A case's slice is the one run B gives it (A's when B lacks the case). Columns: slice, n, rate_a,
    rate_b, diff, se, ci_low, ci_high (the slice's own ``compare_runs`` interval, inside [-1, 1]), pass_to_fail,
    fail_to_pass, mcnemar_p, p and significant (the paired test's p below the comparison's alpha: McNemar's exact
    test with one repeat, the sign-flip test on case pass rates with repeats).
    """
    own = verdicts.filter(pl.col("run_id") == run_b).select("case_id", "slice").unique("case_id")
    other = verdicts.filter((pl.col("run_id") == run_a) & pl.col("slice").is_not_null())
    other = other.select("case_id", "slice").unique("case_id").join(own, on="case_id", how="anti")
    labels = pl.concat([own, other]).rename({"slice": "_slice"})
    tagged = verdicts.filter(pl.col("run_id").is_in([run_a, run_b])).join(labels, on="case_id", how="inner")
    records = []
    for (name,), part in tagged.partition_by("_slice", as_dict=True).items():
        c = compare_runs(part, run_a, run_b)
        records.append(
            {
                "slice": name,
                "n": c.n,
                "rate_a": c.rate_a,
                "rate_b": c.rate_b,
                "diff": c.diff,
                "se": c.se,
                # Bounded only where a change of rates ends, -1 and +1: the observed rate_a is an estimate, and
                # clipping at -rate_a / 1 - rate_a cost small slices' intervals their coverage (docs/statistics.md).
                "ci_low": _within_one(c.ci_low),
                "ci_high": _within_one(c.ci_high),
                "pass_to_fail": c.only_a,
                "fail_to_pass": c.only_b,
                "mcnemar_p": c.mcnemar_exact_p,
                "p": c.p,
                "significant": c.significant,
            }
        )
    schema = {"slice": pl.String, "n": pl.Int64} | {
        c: pl.Float64 for c in ("rate_a", "rate_b", "diff", "se", "ci_low", "ci_high")
    }
    schema |= {"pass_to_fail": pl.Int64, "fail_to_pass": pl.Int64, "mcnemar_p": pl.Float64, "p": pl.Float64}
    schema |= {"significant": pl.Boolean}
    return (
        pl.DataFrame(records, schema=schema)
        .with_columns(pl.col(pl.Float64).fill_nan(None))
        .filter(pl.col("n") > 0)
        .sort("slice")
    )


def _within_one(x: float) -> float:
    """x inside [-1, 1]; NaN (no interval) as it is."""
    return x if x != x else min(max(x, -1.0), 1.0)


def moved_slices(slices: pl.DataFrame) -> pl.DataFrame:
    """Slices with a non-zero net change, worst first.

    With one repeat a net change means a flipped case; with repeats a slice moves when its cases' pass rates
    do, whether or not a majority verdict flipped.
    """
    return slices.filter(pl.col("diff").abs() > 1e-12).sort("diff", "slice")


def same_suite(info: RunInfo, reference: Reference) -> None:
    """Raise unless the run and its reference are of one suite: verdicts of another suite compare nothing."""
    if reference.info.suite != info.suite:
        raise EvalkitError(
            f"{reference.path} is a baseline of suite {reference.info.suite!r}, but the run is of suite "
            f"{info.suite!r}; compare runs of one suite"
        )


def compare(info: RunInfo, verdicts: pl.DataFrame, reference: Reference) -> Comparison:
    """Compare a run's case verdicts with a reference of the same suite."""
    a = reference.info
    same_suite(info, reference)
    run_b = info.run_id
    run_a = a.run_id if a.run_id != run_b else f"{a.run_id} (baseline)"
    ref = reference.verdicts.select(VERDICT_COLUMNS).with_columns(pl.lit(run_a).alias("run_id"))
    mine = verdicts.select(VERDICT_COLUMNS)
    if reference.majority_only:
        # the reference's verdicts are majorities of repeats: a case mean against a majority would measure the
        # flakiness of a case, not a change, so this side is compared on its majority verdicts too
        mine = majority_verdicts(mine).with_columns(pl.lit(run_b).alias("run_id"), pl.lit(0).alias("repeat"))
        mine = mine.select(VERDICT_COLUMNS)
    both = pl.concat([ref, mine], how="vertical_relaxed")
    paired = compare_runs(both, run_a, run_b)
    shared = paired.n + len(paired.unscored)
    return Comparison(
        reference=reference,
        run_a=run_a,
        run_b=run_b,
        paired=paired,
        slices=slice_deltas(both, run_a, run_b),
        drift=model_drift(a, info),
        version_warning=version_warning(a, info, shared),
        verdicts=both,
        changes=run_changes(a, info),
        note=reference.repeats_note,
    )
