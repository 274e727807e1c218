"""Charts for notebooks and reports: Altair charts over a run's frames, rendered offline (``to_svg``).

Every chart takes plain polars frames or evalkit's result objects and returns an Altair chart; click selections
are named, so a widget can listen to them (``CELL_SELECTION`` on the confusion chart).
"""

from typing import TYPE_CHECKING

from evalkit._lazy import attach

if TYPE_CHECKING:
    from evalkit._report import (
        cost_latency_chart,
        history_chart,
        mde_chart,
        mde_curve,
        noise_floor_chart,
        noise_floor_frame,
        slice_coverage_chart,
        slice_delta_chart,
        slice_pass_rate_chart,
        to_svg,
    )
    from evalkit.charts._confusion import CELL_SELECTION, confusion_chart
    from evalkit.charts._effects import effect_chart

__getattr__, __dir__, __all__ = attach(__name__, __file__)
