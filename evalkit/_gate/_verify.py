"""What a gate cannot verify: baseline cases this run did not score, and a suite that changed under the baseline.

A pass rate that held on the cases both sides scored says nothing about the cases one side did not score:
198 errors, a judge that was switched off, or a suite with the regressed cases deleted would all pass a gate
that only compared what was left. So every baseline case the run cannot show a verdict for is counted here, and
so is every shared case the baseline itself has no verdict for (a baseline accepted without a judge cannot
vouch for its judged cases); the gate fails on them unless the caller tolerates some explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import polars as pl

from evalkit._baseline import Reference, majority_verdicts
from evalkit._report import plural

Reason = Literal["error", "not_judged", "not_scored", "missing", "baseline_unscored"]

# Why a case could not be verified, and how to make it verifiable ({run} is the run directory).
_REASONS: dict[Reason, tuple[str, str]] = {
    "error": ("ended in an error", "resume the errored cases: `evalkit run --resume {run}`"),
    "not_judged": (
        "have judge checks that were not judged",
        "judge them (set ANTHROPIC_API_KEY and run without --judge off), or replay the judged checks from a "
        "committed cache: `evalkit run --cache replay`",
    ),
    "not_scored": ("got no verdict from any check", "fix the checks that were skipped and run again"),
    "missing": (
        "are in the baseline but not in this run",
        "restore the cases, or accept a new baseline deliberately: `evalkit baseline accept {run}`",
    ),
    "baseline_unscored": (
        "have no verdict in the baseline (it was accepted without a judge, its checks were skipped, or the case "
        "ended in an error there)",
        "accept a baseline that scores them: a run with every check on (the judge too), then "
        "`evalkit baseline accept RUN --force`",
    ),
}
LISTED = 10


@dataclass(frozen=True)
class Verification:
    """The baseline cases the run could not verify, and the suite-version check."""

    unverified: dict[str, Reason]
    """Baseline case id -> why this run cannot show its verdict held: cases the baseline scored and the run
    did not, every baseline case missing from the run, and shared cases the baseline has no verdict for."""
    version_changed: bool
    changed: list[str] = field(default_factory=list)
    """With a version change allowed: the baseline cases whose content changed, left out of the comparison."""
    hashes_missing: bool = False
    """A version change was allowed but one side has no per-case hashes, so no case can be shown unchanged."""
    allow_unscored: int = 0
    allow_version_change: bool = False

    @property
    def tolerated(self) -> bool:
        """Whether the unverifiable cases are within ``allow_unscored``."""
        return len(self.unverified) <= self.allow_unscored

    @property
    def version_blocks(self) -> bool:
        return self.version_changed and (not self.allow_version_change or self.hashes_missing)

    @property
    def failed(self) -> bool:
        return self.version_blocks or not self.tolerated

    def lines(self, run: str) -> list[str]:
        """What could not be verified and how to fix it, for the gate's verdict."""
        out: list[str] = []
        loosened = []
        if self.allow_unscored:
            loosened.append(f"allow_unscored={self.allow_unscored}")
        if self.allow_version_change:
            loosened.append("allow_version_change")
        if loosened:
            out.append(f"gate loosened by {', '.join(loosened)}")
        if self.version_changed:
            if not self.allow_version_change:
                out.append(
                    "UNVERIFIED: the suite version differs from the baseline's, so its verdicts are of other "
                    "cases; accept a new baseline deliberately (`evalkit baseline accept "
                    f"{run}`), or allow the version change to compare only the cases whose content did not change"
                )
            elif self.hashes_missing:
                out.append(
                    "UNVERIFIED: the version change is allowed, but the baseline records no per-case content "
                    "hashes (it was accepted by an older evalkit, or its suite had changed since its run), so no "
                    "case can be shown unchanged; re-accept the baseline's run from the suite it was scored on, or "
                    f"accept a new baseline deliberately (`evalkit baseline accept {run}`)"
                )
            else:
                out.append(
                    f"suite version changed (allowed): {plural(len(self.changed), 'baseline case')} changed "
                    "content and were left out of the comparison"
                    + (f": {_ids(self.changed)}" if self.changed else "")
                )
        by_reason: dict[Reason, list[str]] = {}
        for cid, why in sorted(self.unverified.items()):
            by_reason.setdefault(why, []).append(cid)
        if by_reason:
            head = "tolerated" if self.tolerated else "UNVERIFIED"
            total = len(self.unverified)
            limit = f" (allow_unscored={self.allow_unscored})" if self.allow_unscored else ""
            out.append(
                f"{head}: {plural(total, 'baseline case')} could not be verified{limit}; the pass rate cannot "
                "be shown to have held on them:"
            )
            for why, ids in by_reason.items():
                what, fix = _REASONS[why]
                out.append(f"  {len(ids)} {what}: {_ids(ids)}")
                out.append(f"    to fix: {fix.format(run=run)}")
        return out


def describe(why: Reason) -> str:
    """Why a case could not be verified, as the JUnit message says it."""
    return _REASONS[why][0].replace("have ", "has ").replace("are in", "is in")


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:LISTED])
    return shown + (
        f" and {len(ids) - LISTED} more (the JUnit file lists them all)" if len(ids) > LISTED else ""
    )


def verify(
    rows: pl.DataFrame,
    verdicts: pl.DataFrame,
    reference: Reference,
    *,
    version_changed: bool,
    run_hashes: dict[str, str] | None,
    allow_unscored: int = 0,
    allow_version_change: bool = False,
) -> Verification:
    """Which of the reference's cases this run cannot vouch for.

    Parameters
    ----------
    rows, verdicts: the run's check rows and (case x repeat) verdicts.
    reference: what the run is gated against.
    version_changed: whether the suite versions differ.
    run_hashes: the run's per-case content hashes, when known.
    allow_unscored, allow_version_change: the explicit loosenings.

    Returns
    -------
    The Verification; ``changed`` lists the baseline cases to leave out of the comparison.
    """
    theirs = majority_verdicts(reference.verdicts).select("case_id", "status")
    mine = majority_verdicts(verdicts).select("case_id", pl.col("status").alias("now"))
    changed: list[str] = []
    hashes_missing = False
    if version_changed and allow_version_change:
        ref_hashes = reference.case_hashes
        if ref_hashes is None or run_hashes is None:
            hashes_missing = True
        else:
            changed = sorted(c for c, h in ref_hashes.items() if c in run_hashes and run_hashes[c] != h)
    skip = set(changed)
    joined = theirs.filter(~pl.col("case_id").is_in(list(skip))).join(mine, on="case_id", how="left")
    not_judged = set(rows.filter(pl.col("status") == "not_judged").get_column("case_id").unique().to_list())
    unverified: dict[str, Reason] = {}
    for cid, then, now in joined.iter_rows():
        if now is None:
            unverified[cid] = "missing"
        elif then in (
            "not_scored",
            "error",
        ):  # the baseline cannot vouch for the case: no pass can be shown to hold
            unverified[cid] = "baseline_unscored"
        elif then in ("pass", "fail") and now == "error":
            unverified[cid] = "error"
        elif then in ("pass", "fail") and now == "not_scored":
            unverified[cid] = "not_judged" if cid in not_judged else "not_scored"
    return Verification(
        unverified=unverified,
        version_changed=version_changed,
        changed=changed,
        hashes_missing=hashes_missing,
        allow_unscored=allow_unscored,
        allow_version_change=allow_version_change,
    )
