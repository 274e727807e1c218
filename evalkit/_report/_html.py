"""The HTML report: one self-contained page (inline CSS and SVG charts, no external resource); user text escaped."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from evalkit._baseline import Comparison, max_repeats
from evalkit._report._build import Report
from evalkit._report._calibration import TRUST_CSS, trust_badge, trust_html
from evalkit._report._failures import Failure
from evalkit._report._filter_js import FILTER_JS
from evalkit._report._format import ci_pts, is_nan, money, pct, pts, pval, secs
from evalkit._report._text import left_out, mde_sentence, ordered_flips
from evalkit._report._transcript import is_transcript, show_transcript
from evalkit._version import __version__

MAX_FLIPPED_HTML = 200
MAX_OUTPUT_CHARS = 3000
MAX_FAILURES_HTML = 2000  # at most what the report keeps (MAX_FAILURES)


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
    """A value as readable text: strings as they are, a tool-using system's transcript as its reply and calls,
    anything else as indented JSON."""
    if isinstance(value, str):
        return value
    if is_transcript(value):
        return show_transcript(value)
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
            {
                "output": r.get("output"),
                "error": r.get("case_error"),
                "status": r.get("case_status"),
                # a baseline.json's stored output may be clipped; a run's rows have no such column
                "full_chars": r.get("output_chars") if r.get("output_clipped") else None,
                "checks": 0,
                "problems": [],
            },
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
    from evalkit._report._charts import to_svg

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
.chart{margin:.5rem 0;max-width:100%;overflow-x:auto}.chart svg{max-width:100%;height:auto}
.gatefail{background:#fdecea;border:2px solid #c0392b;padding:.5rem 1rem;margin:1rem 0}
.gatepass{background:#eafaf1;border:2px solid #1e8449;padding:.5rem 1rem;margin:1rem 0}
#failures td{font-size:13px}#failures th.sort{cursor:pointer}.filters label{margin-right:1rem}
.crit{margin:.2rem 0 .2rem 1rem}.met{color:#1e8449}.unmet{color:#c0392b}
footer{margin-top:3rem;color:#777;font-size:12px}
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


class GateSummary(Protocol):
    """What the page shows of a gate's verdict (a ``GateOutcome`` is one)."""

    @property
    def exit_code(self) -> int: ...

    @property
    def text(self) -> str: ...


def _gate_section(gate: GateSummary) -> str:
    verdict = "FAILED" if gate.exit_code else "PASSED"
    css = "gatefail" if gate.exit_code else "gatepass"
    return f'<div class="{css}"><b>gate {verdict}</b><pre>{_e(gate.text)}</pre></div>'


def _headline(report: Report) -> str:
    o = report.overall
    cases = report.verdicts.get_column("case_id").n_unique()
    kind = "clustered by case" if report.repeats > 1 else "Wilson"
    # the rate counts the judge's verdicts: beside it, whether the judge has been measured against people
    badge = trust_badge(report.judge)
    if o["not_scored"]:
        # the unscored cases passed every check that ran: a rate over the scored ones alone is biased low
        total = o["n"] + o["not_scored"]
        low, high = o["passes"] / total, (o["passes"] + o["not_scored"]) / total
        rate = (
            f'<p class="big">pass rate <b>not known yet</b>: between {pct(low)} and {pct(high)} — '
            f"{o['not_scored']} of {total} verdicts passed every check that ran but await the judge {badge}</p>"
            f"<p>scored verdicts alone: {pct(o['rate'])} (95% CI {pct(o['ci_low'])}–{pct(o['ci_high'])}, "
            f"{_e(kind)})</p>"
        )
    else:
        rate = (
            f'<p class="big">pass rate <b>{pct(o["rate"])}</b> (95% CI {pct(o["ci_low"])}–{pct(o["ci_high"])}, '
            f"{_e(kind)}) {badge}</p>"
        )
    parts = [
        rate,
        f"<p>{o['passes']} of {o['n']} scored verdicts; {cases} cases × {report.repeats} "
        f"repeat{'s' if report.repeats > 1 else ''}; {o['errors']} errors; {o['not_scored']} not scored "
        "(errors and unscored verdicts are counted beside the rate, never in it)</p>",
        trust_html(report.judge),
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
            f"(95% CI {ci_pts(p.ci_low, p.ci_high)}), {_e(p.p_label)} = {pval(p.p)}</p>"
        )
        if c.note:
            parts.append(f'<p class="warn">{_e(c.note)}</p>')
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
        if c.changes:
            items = "".join(f"<li>{_e(x)}</li>" for x in c.changes)
            parts.append(f'<p>Changed since the baseline:</p><ul class="changes">{items}</ul>')
        else:
            parts.append(
                "<p>Nothing recorded changed since the baseline (suite, system, prompt, model, code, judge).</p>"
            )
    return "\n".join(parts)


def _slices_section(report: Report) -> str:
    rates = report.slice_rates
    chart = _inline_svg(_slice_chart(report))
    # with repeats the case is the unit: count cases, not case x repeat rows
    repeated = report.repeats > 1
    rows = [
        [
            _e(r["slice"]),
            str(r["n_cases"] if repeated else r["n"]),
            pct(r["rate"]),
            f"{pct(r['ci_low'])}–{pct(r['ci_high'])}",
            str(r["errors"]),
        ]
        for r in rates.sort("slice").iter_rows(named=True)
    ]
    scored = f"scored cases ({report.repeats} repeats each)" if repeated else "scored"
    table = _table(["slice", scored, "pass rate", "95% CI", "errors"], rows, {1, 2, 4})
    return f'<h2>Pass rate by slice</h2><div class="chart">{chart}</div>{table}'


def _slice_chart(report: Report) -> Any:
    from evalkit._report._charts import slice_pass_rate_chart

    return slice_pass_rate_chart(report.slice_rates)


def _deltas_section(c: Comparison) -> str:
    from evalkit._report._charts import slice_delta_chart

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
            ci_pts(r["ci_low"], r["ci_high"]),
            str(r["pass_to_fail"]),
            str(r["fail_to_pass"]),
            pval(r["p"]),
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
        "McNemar p" if c.paired.test == "mcnemar" else "sign-flip p",
    ]
    table = _table(header, rows, {1, 2, 3, 4, 6, 7, 8})
    return f'<h2>Change by slice</h2><div class="chart">{chart}</div>{table}'


def _flipped_section(report: Report, c: Comparison, limit: int) -> str:
    flipped = ordered_flips(c.paired.flipped)
    total = flipped.height
    if not total:
        return "<h2>Flipped cases</h2><p>No case changed its verdict.</p>"
    shown = flipped.head(limit)
    ids = shown.get_column("case_id").to_list()
    inputs = case_inputs(report.manifest.suite_path, ids)
    mine = _case_details(report.rows, ids)
    ref = c.reference
    theirs = _case_details(ref.output_rows, ids)
    repeated = report.repeats > 1 or max_repeats(ref.verdicts) > 1
    verdict_a = dict(
        ref.verdicts.filter(pl.col("case_id").is_in(ids)).select("case_id", "status").iter_rows()
    )

    def side(d: dict[str, Any] | None, mean: Any, baseline_case: str | None = None) -> str:
        """One side's first repeat; `baseline_case` names the case when this side is a baseline.json's."""
        if d is None:
            if ref.kind != "baseline":
                return ""
            if ref.outputs_note is not None:  # said once, above the table
                return "<i>outputs are not stored in baseline.json (see above)</i>"
            return "<i>baseline.json stores no output for this case</i>"
        text = _e(_clip(_show_output(d["output"])))
        bits = [f"<pre>{text}</pre>"]
        if d.get("full_chars"):
            bits.append(
                f"<p><small>clipped in baseline.json: {d['full_chars']} characters in all</small></p>"
            )
        verdict = verdict_a.get(baseline_case) if baseline_case is not None else None
        if verdict is not None and d["status"] and verdict != d["status"]:
            bits.append(
                f"<p>this repeat {_e(d['status'])}; the baseline's verdict (majority of its repeats) "
                f"{_e(verdict)}</p>"
            )
        if d["error"]:
            bits.append(f"<p><b>error:</b> {_e(_clip(d['error'], 600))}</p>")
        if d["problems"]:
            items = "".join(f"<li>{_e(x)}</li>" for x in d["problems"])
            bits.append(f"<ul>{items}</ul>")
        else:
            bits.append(
                "<p>its check passed</p>" if d["checks"] == 1 else f"<p>all {d['checks']} checks passed</p>"
            )
        if repeated and not is_nan(mean) and baseline_case is None:  # a baseline keeps a verdict, not a mean
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
                side(theirs.get(cid), r["mean_a"], cid if ref.kind == "baseline" else None),
                side(mine.get(cid), r["mean_b"]),
            ]
        )
    count = f"<p>{total} flipped ({c.paired.only_a} pass→fail, {c.paired.only_b} fail→pass)"
    count += f"; showing the first {limit}, regressions first.</p>" if total > limit else ".</p>"
    if ref.outputs_note is not None:
        count += f'<p class="warn">{_e(ref.outputs_note)}</p>'
    table = _table(["case", "direction", "input", "baseline output and grader detail", "this run"], rows)
    return f"<h2>Flipped cases</h2>{count}{table}"


def _noise_section(report: Report) -> str:
    n = report.noise
    if n is None:
        return ""
    rows = [
        ["repeats", str(n["repeats"])],
        ["sd of one repeat's pass rate across repeats", pts(n["sd_repeat_rates"], signed=False)],
        ["sd one pass should show from within-case noise alone", pts(n["sd_expected"], signed=False)],
        ["mean flip rate (share of repeat pairs that disagree)", pct(n["mean_flip_rate"])],
        [
            "flaky cases (passed some repeats, failed others)",
            f"{n['flaky_cases']} of {n['n_cases_repeated']}",
        ],
    ]
    flaky = ""
    if report.flaky:
        names = ", ".join(f"<code>{_e(x)}</code>" for x in report.flaky)
        flaky = f"<p>Flaky cases (the verdict differs across repeats): {names}</p>"
    r = int(n["repeats"])
    # the sd is of one repeat's rate; the pass rate above averages r of them, which moves sqrt(r) times less
    average = pts(n["sd_repeat_rates"] / r**0.5, signed=False) if not is_nan(n["sd_repeat_rates"]) else "n/a"
    return (
        "<h2>Noise floor</h2><p>How much this unchanged system's pass rate moves from one repeat (one pass over "
        f"the suite) to the next. The pass rate above averages {r} repeats: from repeat noise alone its sd is "
        f"about &radic;{r} times smaller, {average}. Whether a change against a baseline is more than noise is "
        "for the change's interval to say, not these figures.</p>"
        f"{_table(['', 'value'], rows, {1})}{flaky}"
    )


def _power_section(report: Report) -> str:
    return f"<h2>Minimum detectable effect</h2><p>{_e(mde_sentence(report.power))}.</p>"


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
        f"(95% CI {ci_pts(s['diff_ci_low'], s['diff_ci_high'])}): the system may be tuned to the dev cases.</p>"
        if s["warning"]
        else f"<p>Difference dev − holdout {pts(s['diff'])} "
        f"(95% CI {ci_pts(s['diff_ci_low'], s['diff_ci_high'])}).</p>"
    )
    return f"<h2>Dev vs holdout</h2>{_table(['split', 'scored', 'pass rate', '95% CI'], rows, {1, 2})}{note}"


def _cost_section(report: Report) -> str:
    from evalkit._report._charts import cost_latency_chart

    by_run = report.costs.by_run
    rows = [
        [
            f"<code>{_e(r['run_id'])}</code>",
            str(r["tasks"]),
            money(r["cost_per_task_usd"]),
            money(r["cost_total_usd"]),
            pct(r["judge_share"]),
            str(r["cost_unknown_tasks"]),
            secs(r["latency_p50_s"]),
            secs(r["latency_p95_s"]),
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
    table = _table(header, rows, {1, 2, 3, 4, 5, 6, 7}) + _prompt_cache_table(report)
    if by_run.height < 2:
        return f"<h2>Cost and latency</h2>{table}"  # one bar per panel says nothing the table does not
    chart = _inline_svg(cost_latency_chart(by_run))
    return f'<h2>Cost and latency</h2>{table}<div class="chart">{chart}</div>'


def _prompt_cache_table(report: Report) -> str:
    use = report.prompt_cache
    if use is None:
        return ""
    total = use.uncached + use.written + use.read
    share = use.saved_usd / use.uncached_cost_usd if use.uncached_cost_usd > 0 else 0.0
    rows = [
        ["read from the prompt cache (0.1x)", f"{use.read:,}", pct(use.read / total if total else 0.0)],
        [
            "written to it (1.25x, or 2x for 1 hour)",
            f"{use.written:,}",
            pct(use.written / total if total else 0.0),
        ],
        ["uncached (1x)", f"{use.uncached:,}", pct(use.uncached / total if total else 0.0)],
    ]
    note = (
        f"<p>Input tokens of the {use.calls} system calls this run paid for. Prompt caching saved "
        f"{money(use.saved_usd)} of {money(use.uncached_cost_usd)}, {pct(share)}.</p>"
    )
    return _table(["input tokens", "tokens", "share"], rows, {1, 2}) + note


def render_html(
    report: Report,
    max_flipped: int = MAX_FLIPPED_HTML,
    *,
    gate: GateSummary | None = None,
    max_failures: int | None = MAX_FAILURES_HTML,
) -> str:
    """One self-contained HTML page: inline CSS, SVG and script, no external resource; user text escaped.

    Parameters
    ----------
    report: from ``build_report``.
    max_flipped: how many flipped cases to show.
    gate: the gate's outcome, to show its verdict at the top.
    max_failures: how many failing cases the failures table holds (None: all).

    Returns
    -------
    The page. Without JavaScript every row shows; the script only adds the filters and sorting.
    """
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
        _gate_section(gate) if gate is not None else "",
        _headline(report),
        _failures_section(report, max_failures),
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
        f"<title>{title}</title><style>{_CSS}{TRUST_CSS}</style></head>\n<body><main>\n{body}\n</main>"
        f"<footer>evalkit {_e(__version__)} · one file, opens offline</footer>"
        f"<script>{FILTER_JS}</script></body></html>\n"
    )


def _check_cell(f: Failure) -> str:
    items = []
    for c in f.checks:
        bits = [f"<b>{_e(c.status)}</b> {_e(c.name)} <small>({_e(c.kind)})</small>"]
        if c.detail:
            bits.append(f": {_e(_clip(c.detail, 600))}")
        for x in c.criteria:
            met = bool(x.get("met"))
            ev = f" — evidence: “{_e(_clip(str(x.get('evidence')), 300))}”" if x.get("evidence") else ""
            bits.append(
                f'<div class="crit {"met" if met else "unmet"}">{"met" if met else "not met"}: '
                f"{_e(x.get('criterion'))}{ev}</div>"
            )
        if c.reasoning:
            bits.append(f'<div class="crit">judge: {_e(_clip(c.reasoning, 1200))}</div>')
        items.append(f"<li>{''.join(bits)}</li>")
    if f.error:
        items.insert(0, f"<li><b>error</b>: {_e(_clip(f.error, 600))}</li>")
    return f"<ul>{''.join(items)}</ul>"


def _failures_section(report: Report, limit: int | None) -> str:
    found = report.failures
    total = report.failure_count
    if not found:
        return "<h2>Failing cases</h2><p>No case failed or errored.</p>"
    shown = found if limit is None else found[:limit]
    inputs = case_inputs(report.manifest.suite_path, [f.case_id for f in shown])
    rows = []
    for f in shown:
        names = sorted({c.name for c in f.checks if c.status in ("fail", "error")})
        value = inputs.get(f.case_id)
        shown_input = (
            f"<pre>{_e(_clip(_show(value), 1500))}</pre>" if f.case_id in inputs else "<i>not found</i>"
        )
        rep = f"<br><small>repeat {f.repeat}</small>" if report.repeats > 1 else ""
        rows.append(
            f'<tr data-slice="{_e(f.slice)}" data-checks="{_e(json.dumps(names))}" data-status="{_e(f.status)}">'
            f"<td><code>{_e(f.case_id)}</code>{rep}</td><td>{_e(f.slice)}</td><td>{_e(f.status)}</td>"
            f"<td>{shown_input}</td><td><pre>{_e(_clip(_show_output(f.output), 1500))}</pre></td>"
            f"<td>{_check_cell(f)}</td></tr>"
        )
    head = "".join(
        f'<th class="sort" data-col="{i}">{h}</th>' if i < 3 else f"<th>{h}</th>"
        for i, h in enumerate(["case", "slice", "status", "input", "output", "checks"])
    )
    count = f"<p>{total} failing or errored case{'s' if total != 1 else ''}"
    count += f"; the first {len(shown)} are listed.</p>" if len(shown) < total else ".</p>"
    return (
        f'<h2>Failing cases</h2>{count}<div class="filters" id="failure-filters"></div>'
        f'<table id="failures"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
