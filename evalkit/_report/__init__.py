"""The report of a run: the terminal summary, the HTML page and its charts.

Every name loads its module on first use: the terminal summary of a run needs neither the HTML page nor the
baseline comparison (about 30 ms of every `evalkit run` when they loaded with the package)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalkit._baseline import Comparison, compare, slice_deltas
    from evalkit._report._build import Report, build_report
    from evalkit._report._calibration import JudgedCheck, JudgeTrust, trust_lines
    from evalkit._report._charts import (
        cost_latency_chart,
        slice_delta_chart,
        slice_pass_rate_chart,
        to_svg,
    )
    from evalkit._report._charts_curation import slice_coverage_chart
    from evalkit._report._charts_regressions import (
        history_chart,
        mde_chart,
        mde_curve,
        noise_floor_chart,
        noise_floor_frame,
    )
    from evalkit._report._failures import judge_criteria
    from evalkit._report._format import ci_pts, is_nan, money, pct, plural, pts, pval, secs
    from evalkit._report._html import case_inputs, render_html
    from evalkit._report._summary import format_summary
    from evalkit._report._text import comparison_lines, format_report, left_out, warning_lines

_LAZY = {
    "Comparison": "evalkit._baseline",
    "compare": "evalkit._baseline",
    "slice_deltas": "evalkit._baseline",
    "Report": "evalkit._report._build",
    "build_report": "evalkit._report._build",
    "JudgedCheck": "evalkit._report._calibration",
    "JudgeTrust": "evalkit._report._calibration",
    "trust_lines": "evalkit._report._calibration",
    "judge_criteria": "evalkit._report._failures",
    "ci_pts": "evalkit._report._format",
    "is_nan": "evalkit._report._format",
    "money": "evalkit._report._format",
    "pct": "evalkit._report._format",
    "plural": "evalkit._report._format",
    "pts": "evalkit._report._format",
    "pval": "evalkit._report._format",
    "secs": "evalkit._report._format",
    "case_inputs": "evalkit._report._html",
    "render_html": "evalkit._report._html",
    "format_summary": "evalkit._report._summary",
    "comparison_lines": "evalkit._report._text",
    "format_report": "evalkit._report._text",
    "left_out": "evalkit._report._text",
    "warning_lines": "evalkit._report._text",
    "cost_latency_chart": "evalkit._report._charts",
    "slice_delta_chart": "evalkit._report._charts",
    "slice_pass_rate_chart": "evalkit._report._charts",
    "to_svg": "evalkit._report._charts",
    "history_chart": "evalkit._report._charts_regressions",
    "mde_chart": "evalkit._report._charts_regressions",
    "mde_curve": "evalkit._report._charts_regressions",
    "noise_floor_chart": "evalkit._report._charts_regressions",
    "noise_floor_frame": "evalkit._report._charts_regressions",
    "slice_coverage_chart": "evalkit._report._charts_curation",
}


def __getattr__(name: str) -> object:
    from evalkit._lazy import load

    return load(__name__, _LAZY, name)


__all__ = [
    "Comparison",
    "JudgeTrust",
    "JudgedCheck",
    "Report",
    "build_report",
    "case_inputs",
    "ci_pts",
    "compare",
    "comparison_lines",
    "cost_latency_chart",
    "format_report",
    "format_summary",
    "history_chart",
    "is_nan",
    "judge_criteria",
    "left_out",
    "mde_chart",
    "mde_curve",
    "money",
    "noise_floor_chart",
    "noise_floor_frame",
    "pct",
    "plural",
    "pts",
    "pval",
    "render_html",
    "secs",
    "slice_coverage_chart",
    "slice_delta_chart",
    "slice_deltas",
    "slice_pass_rate_chart",
    "to_svg",
    "trust_lines",
    "warning_lines",
]
