"""The HTML page of a pairwise A/B comparison: B's win rate per slice with its interval, and each slice's cases
with both outputs and the judge's reasons in both orders side by side (a click on the slice opens them)."""

from __future__ import annotations

from typing import Any

import polars as pl

from evalkit._report._format import pct
from evalkit._report._html import _CSS, _clip, _e, _inline_svg, _show_output, _table
from evalkit._version import __version__

__all__ = ["ab_win_rate_frame", "render_ab_html"]

_AB_CSS = """
details.slice{margin:.4rem 0;border:1px solid #ddd;padding:.3rem .6rem}details.slice>summary{cursor:pointer;
font-weight:600}.side td{width:22%}.side td:first-child{width:10%}.verdict-B{color:#1e8449;font-weight:600}.verdict-A{color:#c0392b;
font-weight:600}.verdict-tie{color:#555}
"""


def ab_win_rate_frame(summary: dict[str, Any]) -> pl.DataFrame:
    """One row per slice (and ``all``): slice, n (wins + losses), rate (B's win rate), ci_low, ci_high, ties."""
    rows = []
    for name, t in [("all", summary), *summary["by_slice"].items()]:
        if t["win_rate_b"] is None:
            continue
        low, high = t["win_rate_b_ci"]
        rows.append(
            {
                "slice": name,
                "n": t["wins_b"] + t["wins_a"],
                "rate": t["win_rate_b"],
                "ci_low": low,
                "ci_high": high,
                "ties": t["ties"],
            }
        )
    schema = {"slice": pl.String, "n": pl.Int64, "rate": pl.Float64, "ci_low": pl.Float64}
    return pl.DataFrame(rows, schema={**schema, "ci_high": pl.Float64, "ties": pl.Int64})


def _verdict(v: str | None) -> str:
    if v is None:
        return '<span class="verdict-tie">no verdict</span>'
    label = {"B": "B wins", "A": "A wins", "tie": "tie"}.get(v, v)
    return f'<span class="verdict-{_e(v)}">{_e(label)}</span>'


def _case_rows(cases: pl.DataFrame) -> list[list[str]]:
    out = []
    for r in cases.sort("case_id").iter_rows(named=True):
        how = r["decided_by"]
        orders = (
            f"A first: {_e(r['a_first'])}<br>B first: {_e(r['b_first'])}"
            if how == "judge"
            else _e({"code": "by code checks", "missing": "the judge gave no valid answer"}.get(how, how))
        )
        out.append(
            [
                f"<code>{_e(r['case_id'])}</code><br>{_verdict(r['verdict'])}<br><small>{orders}</small>",
                f"<pre>{_e(_clip(_show_output(r['output_a'])))}</pre>",
                f"<pre>{_e(_clip(_show_output(r['output_b'])))}</pre>",
                f"<pre>{_e(_clip(r['reasoning_a_first'] or '', 1200))}</pre>",
                f"<pre>{_e(_clip(r['reasoning_b_first'] or '', 1200))}</pre>",
            ]
        )
    return out


def render_ab_html(summary: dict[str, Any], cases: pl.DataFrame) -> str:
    """One self-contained page (inline CSS and SVG, no script) for an A/B result's `summary` (``to_json()``)
    and its per-case rows."""
    from evalkit._report._charts import slice_pass_rate_chart

    frame = ab_win_rate_frame(summary)
    served = ", ".join(summary["judge_served"]) or "no judge call"
    simulated = " (simulated)" if "simulated" in served else ""
    rate = "n/a" if summary["win_rate_b"] is None else pct(summary["win_rate_b"])
    consistency = "n/a" if summary["consistency"] is None else pct(summary["consistency"])
    head = (
        f'<h1>A/B: B against A</h1><p class="meta">A <code>{_e(summary["run_a"])}</code> · B '
        f"<code>{_e(summary['run_b'])}</code> · judge {_e(summary['judge_model'])}, served by {_e(served)}"
        f"{_e(simulated)} · {summary['n']} cases both answered</p>"
        f'<p class="big">B\'s win rate {rate} · B wins {summary["wins_b"]}, A wins {summary["wins_a"]}, ties '
        f"{summary['ties']} · sign test p = {summary['p_value']:.3g} · position consistency {consistency}</p>"
        f'<p class="meta">{_e(summary["method"])}</p>'
    )
    chart = ""
    if frame.height:
        svg = _inline_svg(
            slice_pass_rate_chart(
                frame, title="B's win rate by slice, 95% interval", axis_title="B's win rate"
            )
        )
        chart = f'<div class="chart">{svg}</div>'
    table = _table(
        ["slice", "wins + losses", "B's win rate", "95% CI", "ties"],
        [
            [
                _e(r["slice"]),
                str(r["n"]),
                pct(r["rate"]),
                f"{pct(r['ci_low'])}–{pct(r['ci_high'])}",
                str(r["ties"]),
            ]
            for r in frame.iter_rows(named=True)
        ],
        {1, 2, 4},
    )
    header = ["case", "output A", "output B", "judge, A shown first", "judge, B shown first"]
    slices = []
    for name in sorted(cases.get_column("slice").unique().to_list()):
        part = cases.filter(pl.col("slice") == name)
        counts = part.get_column("verdict").value_counts()
        said = {r["verdict"]: r["count"] for r in counts.iter_rows(named=True)}
        summary_line = f"{_e(name)}: {part.height} cases · B {said.get('B', 0)}, A {said.get('A', 0)}, tie {said.get('tie', 0)}"
        slices.append(
            f'<details class="slice"><summary>{summary_line}</summary>'
            f'<div class="side">{_table(header, _case_rows(part))}</div></details>'
        )
    body = (
        f"{head}<h2>Win rate by slice</h2>{chart}{table}<h2>Cases by slice</h2>"
        "<p>Click a slice to list its cases, both outputs and the judge's reasons in each order.</p>"
        + "".join(slices)
    )
    title = _e(f"evalkit A/B: {summary['run_b']} against {summary['run_a']}")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_CSS}{_AB_CSS}</style></head>\n<body><main>\n{body}\n</main>"
        f"<footer>evalkit {_e(__version__)} · one file, opens offline</footer></body></html>\n"
    )
