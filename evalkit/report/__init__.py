"""The report of a run: the terminal summary, the HTML page and its charts."""

from typing import TYPE_CHECKING

from evalkit.report._report import (
    Comparison,
    build_report,
    compare,
    comparison_lines,
    format_report,
    pts,
    pval,
    render_html,
    slice_deltas,
)
from evalkit.report._summary import format_summary

if TYPE_CHECKING:
    from evalkit.report._charts import (
        cost_latency_chart,
        slice_delta_chart,
        slice_pass_rate_chart,
        to_svg,
    )

_LAZY = {
    "cost_latency_chart": "evalkit.report._charts",
    "slice_delta_chart": "evalkit.report._charts",
    "slice_pass_rate_chart": "evalkit.report._charts",
    "to_svg": "evalkit.report._charts",
}


def __getattr__(name: str) -> object:
    from evalkit._lazy import load

    return load(__name__, _LAZY, name)


__all__ = [
    "Comparison",
    "build_report",
    "compare",
    "comparison_lines",
    "cost_latency_chart",
    "format_report",
    "format_summary",
    "pts",
    "pval",
    "render_html",
    "slice_delta_chart",
    "slice_deltas",
    "slice_pass_rate_chart",
    "to_svg",
]
