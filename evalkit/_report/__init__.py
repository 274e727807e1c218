"""The report of a run: the terminal summary, the HTML page and its charts.

Every name loads its module on first use: the terminal summary of a run needs neither the HTML page nor the
baseline comparison (about 30 ms of every `evalkit run` when they loaded with the package)."""

from typing import TYPE_CHECKING

from evalkit._lazy import attach

if TYPE_CHECKING:
    from evalkit._baseline import Comparison, compare, slice_deltas
    from evalkit._report._ab_html import ab_win_rate_frame, render_ab_html
    from evalkit._report._build import Report, build_report
    from evalkit._report._calibration import trust_lines
    from evalkit._report._charts import (
        NOISE,
        ROW_STEP,
        WIDTH,
        WORSE,
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
    from evalkit._report._format import ci_pts, is_nan, money, pct, plural, pts, pval, secs
    from evalkit._report._html import case_inputs, render_html
    from evalkit._report._summary import asked_and_got, format_summary
    from evalkit._report._text import comparison_lines, format_report, left_out, warning_lines

__getattr__, __dir__, __all__ = attach(__name__, __file__)
