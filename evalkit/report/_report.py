"""The run report: a terminal summary, the paired comparison with a baseline, and a self-contained HTML page.

Every number comes from :mod:`evalkit.stats._stats`; this module only chooses which ones a reader needs and in what
order. Model drift comes first, because a difference measured across two resolved model versions is not a
difference our change made.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from evalkit._version import __version__
from evalkit.baseline import VERDICT_COLUMNS, Reference, RunInfo, max_repeats, run_info
from evalkit.errors import EvalkitError
from evalkit.report._summary import format_summary
from evalkit.results import Manifest
from evalkit.stats import (
    CostLatency,
    PairedComparison,
    PowerPlan,
    case_verdicts,
    clustered_pass_rate,
    compare_runs,
    cost_latency,
    dev_vs_holdout,
    estimate_mde,
    noise_floor,
    pass_rate,
)

MAX_FLIPPED_HTML = 200
MAX_FLIPPED_TEXT = 20
MAX_OUTPUT_CHARS = 3000


# ---------------------------------------------------------------------------------------------------------
# The comparison with a baseline


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
    rate_b, diff, se, ci_low, ci_high (clipped to the changes B's rate allows), pass_to_fail, fail_to_pass, mcnemar_p.
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
                # a t interval on a small slice can run past what the change can be: B's rate lies in [0, 1]
                "ci_low": max(c.ci_low, -c.rate_a) if c.ci_low == c.ci_low else c.ci_low,
                "ci_high": min(c.ci_high, 1.0 - c.rate_a) if c.ci_high == c.ci_high else c.ci_high,
                "pass_to_fail": c.only_a,
                "fail_to_pass": c.only_b,
                "mcnemar_p": c.mcnemar_exact_p,
            }
        )
    schema = {"slice": pl.String, "n": pl.Int64} | {
        c: pl.Float64 for c in ("rate_a", "rate_b", "diff", "se", "ci_low", "ci_high")
    }
    schema |= {"pass_to_fail": pl.Int64, "fail_to_pass": pl.Int64, "mcnemar_p": pl.Float64}
    return (
        pl.DataFrame(records, schema=schema)
        .with_columns(pl.col(pl.Float64).fill_nan(None))
        .filter(pl.col("n") > 0)
        .sort("slice")
    )


def moved_slices(slices: pl.DataFrame) -> pl.DataFrame:
    """Slices with at least one flipped case and a non-zero net change, worst first."""
    return slices.filter(
        ((pl.col("pass_to_fail") + pl.col("fail_to_pass")) > 0) & (pl.col("diff").abs() > 1e-12)
    ).sort("diff", "slice")


def compare(info: RunInfo, verdicts: pl.DataFrame, reference: Reference) -> Comparison:
    """Compare a run's case verdicts with a reference of the same suite."""
    a = reference.info
    if a.suite != info.suite:
        raise EvalkitError(
            f"{reference.path} is a baseline of suite {a.suite!r}, but the run is of suite {info.suite!r}; "
            "compare runs of one suite"
        )
    run_b = info.run_id
    run_a = a.run_id if a.run_id != run_b else f"{a.run_id} (baseline)"
    ref = reference.verdicts.select(VERDICT_COLUMNS).with_columns(pl.lit(run_a).alias("run_id"))
    both = pl.concat([ref, verdicts.select(VERDICT_COLUMNS)], how="vertical_relaxed")
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
    )


# ---------------------------------------------------------------------------------------------------------
# The report


@dataclass(frozen=True, eq=False)
class Report:
    """Everything the terminal and HTML reports show, computed once."""

    manifest: Manifest
    rows: pl.DataFrame
    info: RunInfo
    verdicts: pl.DataFrame
    repeats: int
    overall: dict[str, Any]
    slice_rates: pl.DataFrame
    noise: dict[str, Any] | None
    power: PowerPlan
    splits: dict[str, Any]
    costs: CostLatency
    comparison: Comparison | None = None
    warnings: list[str] = field(default_factory=list)


def build_report(manifest: Manifest, rows: pl.DataFrame, reference: Reference | None = None) -> Report:
    """Compute the report of one run, against a reference run or baseline.json when given."""
    if rows.is_empty():
        raise EvalkitError(f"run {manifest.run_id} has no results to report")
    info = run_info(manifest, rows)
    verdicts = case_verdicts(rows)
    repeats = max_repeats(verdicts)
    # With repeats the case, not the row, is the independent unit: intervals must be clustered.
    rate_fn = clustered_pass_rate if repeats > 1 else pass_rate
    overall = rate_fn(verdicts).row(0, named=True)
    slice_rates = rate_fn(verdicts, by="slice")
    noise = noise_floor(verdicts).row(0, named=True) if repeats > 1 else None
    comparison = compare(info, verdicts, reference) if reference is not None else None
    power = estimate_mde(verdicts, info.run_id)
    if comparison is not None:
        paired = estimate_mde(comparison.verdicts, comparison.run_a, comparison.run_b)
        # with no discordant pairs the paired variance is zero and says nothing about the next change;
        # the unpaired estimate is the honest (conservative) figure then
        if not (_nan(paired.mde) or paired.mde == 0.0):
            power = paired
    splits = dev_vs_holdout(verdicts).row(0, named=True)
    costs = cost_latency(rows)
    if comparison is not None and comparison.reference.rows is not None:
        ref_costs = cost_latency(comparison.reference.rows)
        costs = CostLatency(
            by_run=pl.concat(
                [ref_costs.by_run.with_columns(pl.lit(comparison.run_a).alias("run_id")), costs.by_run]
            ),
            by_tier=pl.concat(
                [ref_costs.by_tier.with_columns(pl.lit(comparison.run_a).alias("run_id")), costs.by_tier]
            ),
        )
    warnings = []
    if manifest.status != "complete":
        warnings.append(f"run {manifest.run_id} is {manifest.status}: cases may be missing")
    return Report(
        manifest=manifest,
        rows=rows,
        info=info,
        verdicts=verdicts,
        repeats=repeats,
        overall=overall,
        slice_rates=slice_rates,
        noise=noise,
        power=power,
        splits=splits,
        costs=costs,
        comparison=comparison,
        warnings=warnings,
    )


# ---------------------------------------------------------------------------------------------------------
# Formatting helpers


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: Any, digits: int = 1) -> str:
    return "n/a" if _nan(x) else f"{100 * float(x):.{digits}f}%"


def pts(x: Any, digits: int = 1) -> str:
    """A difference of proportions in percentage points, signed."""
    return "n/a" if _nan(x) else f"{100 * float(x):+.{digits}f} pts"


def pval(p: Any) -> str:
    if _nan(p):
        return "n/a"
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def _money(x: Any) -> str:
    return "n/a" if _nan(x) else f"${float(x):.4f}"


def _secs(x: Any) -> str:
    if _nan(x):
        return "n/a"
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _reference_name(ref: Reference) -> str:
    if ref.kind == "baseline":
        return f"baseline {ref.path} (run {ref.info.run_id})"
    return f"run {ref.info.run_id} ({ref.path})"


def _ci_pts(low: Any, high: Any) -> str:
    if _nan(low) or _nan(high):
        return "n/a"
    return f"{100 * low:+.1f} to {100 * high:+.1f} pts"


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
    """The comparison as plain text: change and interval, McNemar, flipped cases, slices that moved."""
    p = c.paired
    lines = [
        f"against {_reference_name(c.reference)}, {_plural(p.n, 'shared scored case')}:",
        f"  pass rate {pct(p.rate_a)} -> {pct(p.rate_b)}   change {pts(p.diff)}  "
        f"95% CI {_ci_pts(p.ci_low, p.ci_high)}   McNemar exact p = {pval(p.mcnemar_exact_p)}",
        f"  flipped: {p.only_a} pass->fail, {p.only_b} fail->pass "
        f"(both pass {p.both_pass}, both fail {p.both_fail})",
    ]
    notes = left_out(p)
    if notes:
        lines.append("  left out: " + "; ".join(notes))
    flipped = _ordered_flips(p.flipped)
    if flipped.height:
        width = max(len(str(x)) for x in flipped.get_column("case_id").head(max_cases).to_list())
        for r in flipped.head(max_cases).iter_rows(named=True):
            lines.append(f"    {r['direction']}  {r['case_id']:<{width}}  {r['slice'] or ''}")
        if flipped.height > max_cases:
            lines.append(f"    ... and {flipped.height - max_cases} more (the HTML report lists them)")
    moved = moved_slices(c.slices)
    if moved.height:
        lines.append("  slices that moved (* = interval excludes zero):")
        width = max(len(s) for s in moved.get_column("slice").to_list())
        for r in moved.iter_rows(named=True):
            sure = not _nan(r["ci_low"]) and (r["ci_low"] > 0 or r["ci_high"] < 0)
            lines.append(
                f"    {r['slice']:<{width}}  n {r['n']:>4}  {pct(r['rate_a'])} -> {pct(r['rate_b'])}  "
                f"{pts(r['diff'])}  95% CI {_ci_pts(r['ci_low'], r['ci_high'])}"
                f"  ({r['pass_to_fail']} pass->fail, {r['fail_to_pass']} fail->pass){' *' if sure else ''}"
            )
    else:
        lines.append("  no slice moved")
    return lines


def _ordered_flips(flipped: pl.DataFrame) -> pl.DataFrame:
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


def format_report(report: Report, max_cases: int = MAX_FLIPPED_TEXT) -> str:
    """The terminal report: warnings (drift first), the run summary, and the comparison if any."""
    lines = warning_lines(report)
    if lines:
        lines.append("")
    lines.append(format_summary(report.manifest, report.rows))
    if report.noise is not None:
        o, n = report.overall, report.noise
        lines.append(
            f"  {report.repeats} repeats: clustered by case, pass rate {pct(o['rate'])} 95% CI "
            f"{pct(o['ci_low'])}–{pct(o['ci_high'])}; repeat-to-repeat sd {pts(n['sd_repeat_rates'])}, "
            f"{_plural(int(n['flaky_cases']), 'flaky case')}"
        )
    if report.comparison is not None:
        lines.append("")
        lines.extend(comparison_lines(report.comparison, max_cases))
    lines.append(f"  {_mde_sentence(report.power)}")
    return "\n".join(lines)


def _mde_sentence(plan: PowerPlan) -> str:
    if _nan(plan.mde):
        return "minimum detectable effect: n/a (too few scored cases)"
    if plan.mde == 0.0:
        return "minimum detectable effect: n/a (no variation between cases to estimate it from)"
    against = "against this baseline" if plan.method == "paired" else "between two runs like this one"
    return (
        f"minimum detectable effect {against}: {100 * plan.mde:.1f} pts "
        f"({round(100 * plan.power)}% power, alpha {plan.alpha:g}, {plan.n} cases)"
    )


# ---------------------------------------------------------------------------------------------------------
# HTML


def case_inputs(suite_path: str | Path, ids: Iterable[str]) -> dict[str, Any]:
    """Inputs of the given case ids, read from the suite's cases file; {} when it is not there.

    Read line by line without validation: a report should still show inputs when the suite has since
    changed or gained a problem.
    """
    path = Path(suite_path)
    if path.is_dir():
        path = path / "cases.jsonl"
    wanted = set(ids)
    out: dict[str, Any] = {}
    if not wanted or not path.is_file():
        return out
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(obj, dict) and obj.get("id") in wanted:
                    out[obj["id"]] = obj.get("input")
    except (OSError, UnicodeDecodeError):
        return out
    return out


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def _clip(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _show(value: Any) -> str:
    """A value as readable text: strings as they are, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def _show_output(raw: str | None) -> str:
    # The output column holds JSON text (a JSON string for a plain-text output).
    if raw is None:
        return "(no output)"
    try:
        return _show(json.loads(raw))
    except json.JSONDecodeError:
        return raw


def _case_details(rows: pl.DataFrame | None, ids: list[str]) -> dict[str, dict[str, Any]]:
    """For each case: the first repeat's output, case error, and its checks that did not pass."""
    if rows is None or not ids:
        return {}
    part = rows.filter(pl.col("case_id").is_in(ids))
    part = part.filter(pl.col("repeat") == pl.col("repeat").min().over("case_id")).sort(
        "case_id", "check_index"
    )
    out: dict[str, dict[str, Any]] = {}
    for r in part.iter_rows(named=True):
        d = out.setdefault(
            r["case_id"],
            {"output": r.get("output"), "error": r.get("case_error"), "checks": 0, "problems": []},
        )
        d["checks"] += 1
        if r["status"] != "pass":
            field_ = f" [{r['check_field']}]" if r.get("check_field") else ""
            text = r.get("error") or r.get("detail") or r.get("skipped_reason") or ""
            if r.get("judge_reasoning"):
                text = f"{text} — judge: {r['judge_reasoning']}"
            d["problems"].append(f"{r['status']}: {r['check_name']}{field_}: {_clip(text, 600)}")
    return out


_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


def _inline_svg(chart: Any) -> str:
    from evalkit.report._charts import to_svg

    # Inline SVG in HTML needs no namespace declarations; dropping them leaves no URL in the page.
    return _XMLNS.sub("", to_svg(chart))


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:1100px;
color:#222;padding:0 1rem}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
.meta{color:#555}.big{font-size:1.3rem}
.drift{background:#fdecea;border:2px solid #c0392b;padding:.7rem 1rem;font-weight:600;margin:1rem 0}
.warn{background:#fff8e1;border:1px solid #e0b000;padding:.5rem 1rem;margin:.5rem 0}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.25rem .5rem;
vertical-align:top;text-align:left}th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{white-space:pre-wrap;word-break:break-word;margin:0;max-height:24rem;overflow:auto;font-size:12px}
.p2f{color:#c0392b;font-weight:600}.f2p{color:#1e8449;font-weight:600}
.chart{margin:.5rem 0}footer{margin-top:3rem;color:#777;font-size:12px}
"""


def _table(header: list[str], rows: list[list[str]], num: set[int] | None = None) -> str:
    num = num or set()
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="num">{c}</td>' if i in num else f"<td>{c}</td>" for i, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _headline(report: Report) -> str:
    o = report.overall
    cases = report.verdicts.get_column("case_id").n_unique()
    kind = "clustered by case" if report.repeats > 1 else "Wilson"
    parts = [
        f'<p class="big">pass rate <b>{pct(o["rate"])}</b> (95% CI {pct(o["ci_low"])}–{pct(o["ci_high"])}, '
        f"{_e(kind)})</p>",
        f"<p>{o['passes']} of {o['n']} scored verdicts; {cases} cases × {report.repeats} "
        f"repeat{'s' if report.repeats > 1 else ''}; {o['errors']} errors; {o['not_scored']} not scored "
        "(errors and unscored verdicts are counted beside the rate, never in it)</p>",
    ]
    c = report.comparison
    if c is not None:
        p = c.paired
        kind_ref = "baseline.json" if c.reference.kind == "baseline" else "run"
        parts.append(
            f"<h2>Against the baseline</h2><p>{_e(kind_ref)} <code>{_e(c.reference.path)}</code> "
            f"(run <code>{_e(c.reference.info.run_id)}</code>, suite version "
            f"<code>{_e(c.reference.info.suite_version)}</code>), {p.n} shared scored cases.</p>"
            f'<p class="big">{pct(p.rate_a)} → {pct(p.rate_b)}: change <b>{pts(p.diff)}</b> '
            f"(95% CI {_ci_pts(p.ci_low, p.ci_high)}), McNemar exact p = {pval(p.mcnemar_exact_p)}</p>"
        )
        parts.append(
            _table(
                ["", "this run passes", "this run fails"],
                [
                    ["baseline passes", str(p.both_pass), f'<span class="p2f">{p.only_a}</span>'],
                    ["baseline fails", f'<span class="f2p">{p.only_b}</span>', str(p.both_fail)],
                ],
                {1, 2},
            )
        )
        notes = left_out(p)
        if notes:
            parts.append(f"<p>Left out of the comparison: {_e('; '.join(notes))}.</p>")
    return "\n".join(parts)


def _slices_section(report: Report) -> str:
    rates = report.slice_rates
    chart = _inline_svg(_slice_chart(report))
    rows = [
        [
            _e(r["slice"]),
            str(r["n"]),
            pct(r["rate"]),
            f"{pct(r['ci_low'])}–{pct(r['ci_high'])}",
            str(r["errors"]),
        ]
        for r in rates.sort("slice").iter_rows(named=True)
    ]
    table = _table(["slice", "scored", "pass rate", "95% CI", "errors"], rows, {1, 2, 4})
    return f'<h2>Pass rate by slice</h2><div class="chart">{chart}</div>{table}'


def _slice_chart(report: Report) -> Any:
    from evalkit.report._charts import slice_pass_rate_chart

    return slice_pass_rate_chart(report.slice_rates)


def _deltas_section(c: Comparison) -> str:
    from evalkit.report._charts import slice_delta_chart

    if c.slices.is_empty():
        return "<h2>Change by slice</h2><p>No shared scored cases.</p>"
    chart = _inline_svg(slice_delta_chart(c.slices))
    rows = [
        [
            _e(r["slice"]),
            str(r["n"]),
            pct(r["rate_a"]),
            pct(r["rate_b"]),
            pts(r["diff"]),
            _ci_pts(r["ci_low"], r["ci_high"]),
            str(r["pass_to_fail"]),
            str(r["fail_to_pass"]),
            pval(r["mcnemar_p"]),
        ]
        for r in c.slices.sort("diff", "slice").iter_rows(named=True)
    ]
    header = [
        "slice",
        "paired",
        "baseline",
        "this run",
        "change",
        "95% CI",
        "pass→fail",
        "fail→pass",
        "McNemar p",
    ]
    table = _table(header, rows, {1, 2, 3, 4, 6, 7, 8})
    return f'<h2>Change by slice</h2><div class="chart">{chart}</div>{table}'


def _flipped_section(report: Report, c: Comparison, limit: int) -> str:
    flipped = _ordered_flips(c.paired.flipped)
    total = flipped.height
    if not total:
        return "<h2>Flipped cases</h2><p>No case changed its verdict.</p>"
    shown = flipped.head(limit)
    ids = shown.get_column("case_id").to_list()
    inputs = case_inputs(report.manifest.suite_path, ids)
    mine = _case_details(report.rows, ids)
    theirs = _case_details(c.reference.rows, ids)
    repeated = report.repeats > 1 or max_repeats(c.reference.verdicts) > 1

    def side(d: dict[str, Any] | None, mean: Any) -> str:
        if d is None:
            return "<i>outputs are not stored in baseline.json</i>" if c.reference.kind == "baseline" else ""
        text = _e(_clip(_show_output(d["output"])))
        bits = [f"<pre>{text}</pre>"]
        if d["error"]:
            bits.append(f"<p><b>error:</b> {_e(_clip(d['error'], 600))}</p>")
        if d["problems"]:
            items = "".join(f"<li>{_e(x)}</li>" for x in d["problems"])
            bits.append(f"<ul>{items}</ul>")
        else:
            bits.append(
                "<p>its check passed</p>" if d["checks"] == 1 else f"<p>all {d['checks']} checks passed</p>"
            )
        if repeated and not _nan(mean):
            bits.append(f"<p>repeat mean {pct(mean, 0)} (first repeat shown)</p>")
        return "".join(bits)

    rows = []
    for r in shown.iter_rows(named=True):
        cid = r["case_id"]
        css = "p2f" if r["direction"] == "pass->fail" else "f2p"
        value = inputs.get(cid)
        shown_input = (
            f"<pre>{_e(_clip(_show(value)))}</pre>"
            if cid in inputs
            else "<i>input not found in the suite</i>"
        )
        rows.append(
            [
                f"<code>{_e(cid)}</code><br>{_e(r['slice'])}",
                f'<span class="{css}">{_e(r["direction"])}</span>',
                shown_input,
                side(theirs.get(cid), r["mean_a"]),
                side(mine.get(cid), r["mean_b"]),
            ]
        )
    count = f"<p>{total} flipped ({c.paired.only_a} pass→fail, {c.paired.only_b} fail→pass)"
    count += f"; showing the first {limit}, regressions first.</p>" if total > limit else ".</p>"
    table = _table(["case", "direction", "input", "baseline output and grader detail", "this run"], rows)
    return f"<h2>Flipped cases</h2>{count}{table}"


def _noise_section(report: Report) -> str:
    n = report.noise
    if n is None:
        return ""
    rows = [
        ["repeats", str(n["repeats"])],
        ["sd of the pass rate across repeats", pts(n["sd_repeat_rates"]).lstrip("+")],
        ["sd one pass should show from within-case noise alone", pts(n["sd_expected"]).lstrip("+")],
        ["mean flip rate (share of repeat pairs that disagree)", pct(n["mean_flip_rate"])],
        [
            "flaky cases (passed some repeats, failed others)",
            f"{n['flaky_cases']} of {n['n_cases_repeated']}",
        ],
    ]
    return (
        "<h2>Noise floor</h2><p>How much this unchanged system moves between repeats: a change smaller "
        f"than this is not a change.</p>{_table(['', 'value'], rows, {1})}"
    )


def _power_section(report: Report) -> str:
    return f"<h2>Minimum detectable effect</h2><p>{_e(_mde_sentence(report.power))}.</p>"


def _splits_section(report: Report) -> str:
    s = report.splits
    if not s["n_holdout"]:
        return "<h2>Dev vs holdout</h2><p>No holdout cases in this suite.</p>"
    rows = [
        ["dev", str(s["n_dev"]), pct(s["rate_dev"]), f"{pct(s['ci_low_dev'])}–{pct(s['ci_high_dev'])}"],
        [
            "holdout",
            str(s["n_holdout"]),
            pct(s["rate_holdout"]),
            f"{pct(s['ci_low_holdout'])}–{pct(s['ci_high_holdout'])}",
        ],
    ]
    note = (
        f'<p class="warn">Dev beats holdout by {pts(s["diff"])} '
        f"(95% CI {_ci_pts(s['diff_ci_low'], s['diff_ci_high'])}): the system may be tuned to the dev cases.</p>"
        if s["warning"]
        else f"<p>Difference dev − holdout {pts(s['diff'])} "
        f"(95% CI {_ci_pts(s['diff_ci_low'], s['diff_ci_high'])}).</p>"
    )
    return f"<h2>Dev vs holdout</h2>{_table(['split', 'scored', 'pass rate', '95% CI'], rows, {1, 2})}{note}"


def _cost_section(report: Report) -> str:
    from evalkit.report._charts import cost_latency_chart

    by_run = report.costs.by_run
    rows = [
        [
            f"<code>{_e(r['run_id'])}</code>",
            str(r["tasks"]),
            _money(r["cost_per_task_usd"]),
            _money(r["cost_total_usd"]),
            pct(r["judge_share"]),
            str(r["cost_unknown_tasks"]),
            _secs(r["latency_p50_s"]),
            _secs(r["latency_p95_s"]),
        ]
        for r in by_run.iter_rows(named=True)
    ]
    header = [
        "run",
        "tasks",
        "cost / task",
        "total",
        "judge share",
        "unknown cost",
        "p50 latency",
        "p95 latency",
    ]
    table = _table(header, rows, {1, 2, 3, 4, 5, 6, 7})
    chart = _inline_svg(cost_latency_chart(by_run))
    return f'<h2>Cost and latency</h2>{table}<div class="chart">{chart}</div>'


def render_html(report: Report, max_flipped: int = MAX_FLIPPED_HTML) -> str:
    """One self-contained HTML page: inline CSS and SVG, no script, no external resource; user text escaped."""
    m = report.manifest
    info = report.info
    warnings: list[str] = []
    c = report.comparison
    if c is not None:
        warnings.extend(f'<div class="drift">{_e(d)}</div>' for d in c.drift)
        if c.version_warning:
            warnings.append(f'<div class="warn">{_e(c.version_warning)}</div>')
    warnings.extend(f'<div class="warn">{_e(w)}</div>' for w in report.warnings)
    model = f" ({info.system_model})" if info.system_model else ""
    versions = f", resolved {', '.join(info.system_model_versions)}" if info.system_model_versions else ""
    judge = ""
    if info.judge_model or info.judge_model_versions:
        jv = ", ".join(info.judge_model_versions) or "not run"
        judge = f" · judge {_e(info.judge_model or '?')} ({_e(jv)})"
    sections = [
        *warnings,
        f"<h1>{_e(m.suite)}: evalkit report</h1>",
        f'<p class="meta">run <code>{_e(m.run_id)}</code> · system {_e(info.system_name)}{_e(model)}'
        f"{_e(versions)}{judge} · suite version <code>{_e(m.suite_version)}</code> · started "
        f"{_e(m.started_at)} · {_e(m.status)}</p>",
        _headline(report),
        _slices_section(report),
    ]
    if c is not None:
        sections.append(_deltas_section(c))
        sections.append(_flipped_section(report, c, max_flipped))
    sections += [
        _noise_section(report),
        _power_section(report),
        _splits_section(report),
        _cost_section(report),
    ]
    title = _e(f"evalkit report: {m.suite} {m.run_id}")
    body = "\n".join(s for s in sections if s)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_CSS}</style></head>\n<body><main>\n{body}\n</main>"
        f"<footer>evalkit {_e(__version__)} · one file, no scripts, opens offline</footer></body></html>\n"
    )
