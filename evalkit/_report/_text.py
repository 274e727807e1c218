"""The terminal report: warnings (drift first), the run summary, the comparison with a baseline."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from evalkit._baseline import Comparison, Reference, moved_slices
from evalkit._report._build import Report
from evalkit._report._failures import DEFAULT_SHOW_FAILURES, ShowFailures
from evalkit._report._format import ci_pts, is_nan, pct, plural, pts, pval
from evalkit._report._summary import format_summary
from evalkit.stats import PowerPlan

MAX_FLIPPED_TEXT = 20


def _reference_name(ref: Reference) -> str:
    if ref.kind == "baseline":
        return f"baseline {ref.path} (run {ref.info.run_id})"
    return f"run {ref.info.run_id} ({ref.path})"


def left_out(p: Any) -> list[str]:
    """What a paired comparison could not include, in words."""
    notes = []
    if p.missing_in_b:
        notes.append(f"{len(p.missing_in_b)} baseline cases are not in this run")
    if p.missing_in_a:
        notes.append(f"{len(p.missing_in_a)} cases of this run are not in the baseline")
    if p.unscored:
        notes.append(f"{len(p.unscored)} shared cases are unscored on one side (errors or not judged)")
    return notes


def comparison_lines(c: Comparison, max_cases: int = MAX_FLIPPED_TEXT) -> list[str]:
    """The comparison as plain text: change and interval, the paired test, flipped cases, slices that moved."""
    p = c.paired
    lines = [
        f"against {_reference_name(c.reference)}, {plural(p.n, 'shared scored case')}:",
        f"  pass rate {pct(p.rate_a)} -> {pct(p.rate_b)}   change {pts(p.diff)}  "
        f"95% CI {ci_pts(p.ci_low, p.ci_high)}   {p.p_label} = {pval(p.p)}",
        f"  flipped: {p.only_a} pass->fail, {p.only_b} fail->pass "
        f"(both pass {p.both_pass}, both fail {p.both_fail})",
    ]
    if c.note:
        lines.append(f"  note: {c.note}")
    notes = left_out(p)
    if notes:
        lines.append("  left out: " + "; ".join(notes))
    if c.changes:
        lines.append("  changed since the baseline: " + "; ".join(c.changes))
    flipped = ordered_flips(p.flipped)
    if flipped.height:
        width = max(len(str(x)) for x in flipped.get_column("case_id").head(max_cases).to_list())
        for r in flipped.head(max_cases).iter_rows(named=True):
            lines.append(f"    {r['direction']}  {r['case_id']:<{width}}  {r['slice'] or ''}")
        if flipped.height > max_cases:
            lines.append(f"    ... and {flipped.height - max_cases} more (the HTML report lists them)")
    moved = moved_slices(c.slices)
    if moved.height:
        lines.append(f"  slices that moved (* = {p.test_name} calls it significant):")
        width = max(len(s) for s in moved.get_column("slice").to_list())
        for r in moved.iter_rows(named=True):
            sure = bool(r["significant"])
            lines.append(
                f"    {r['slice']:<{width}}  n {r['n']:>4}  {pct(r['rate_a'])} -> {pct(r['rate_b'])}  "
                f"{pts(r['diff'])}  95% CI {ci_pts(r['ci_low'], r['ci_high'])}"
                f"  ({r['pass_to_fail']} pass->fail, {r['fail_to_pass']} fail->pass){' *' if sure else ''}"
            )
    else:
        lines.append("  no slice moved")
    return lines


def ordered_flips(flipped: pl.DataFrame) -> pl.DataFrame:
    """Regressions first, then fixes, each by case id."""
    return flipped.sort(pl.col("direction") != "pass->fail", "case_id")


def warning_lines(report: Report) -> list[str]:
    """Model drift first, then the rest: what a reader must know before reading any number."""
    out = []
    c = report.comparison
    if c is not None:
        out.extend(c.drift)
        if c.version_warning:
            out.append(f"warning: {c.version_warning}")
    out.extend(f"warning: {w}" for w in report.warnings)
    return out


def format_report(
    report: Report, max_cases: int = MAX_FLIPPED_TEXT, *, show_failures: ShowFailures = DEFAULT_SHOW_FAILURES
) -> str:
    """The terminal report: warnings (drift first), the run summary, and the comparison if any.

    Parameters
    ----------
    report: from ``build_report``.
    max_cases: how many flipped cases to list.
    show_failures: how many failing cases to list, or "all".

    Returns
    -------
    The report as text.
    """
    lines = warning_lines(report)
    if lines:
        lines.append("")
    lines.append(
        format_summary(
            report.manifest,
            report.rows,
            show_failures=show_failures,
            criteria=report.criteria,
            judge=report.judge,
            prompt_cache=report.prompt_cache,
        )
    )
    if report.noise is not None:
        o, n = report.overall, report.noise
        lines.append(
            f"  {report.repeats} repeats: clustered by case, pass rate {pct(o['rate'])} 95% CI "
            f"{pct(o['ci_low'])}–{pct(o['ci_high'])}; repeat-to-repeat sd {pts(n['sd_repeat_rates'], signed=False)}, "
            f"{plural(int(n['flaky_cases']), 'flaky case')}"
        )
        if report.flaky:
            shown = ", ".join(report.flaky[:max_cases])
            more = f" and {len(report.flaky) - max_cases} more" if len(report.flaky) > max_cases else ""
            lines.append(f"  flaky (verdict differs across repeats): {shown}{more}")
    if report.comparison is not None:
        lines.append("")
        lines.extend(comparison_lines(report.comparison, max_cases))
    lines.append(f"  {mde_sentence(report.power)}")
    return "\n".join(lines)


def mde_sentence(plan: PowerPlan) -> str:
    if is_nan(plan.mde):
        return "minimum detectable effect: n/a (too few scored cases)"
    if plan.mde == 0.0:
        return "minimum detectable effect: n/a (no variation between cases to estimate it from)"
    if math.isinf(plan.mde):
        return f"minimum detectable effect: n/a (no change of the pass rate is detectable on {plan.n} cases)"
    against = "against this baseline" if plan.method == "paired" else "between two runs like this one"
    test = " of the sign-flip test" if plan.test == "sign-flip" else ""
    return (
        f"minimum detectable effect {against}: {100 * plan.mde:.1f} pts "
        f"({round(100 * plan.power)}% power{test}, alpha {plan.alpha:g}, {plan.n} cases)"
    )
