"""Baselines and references: the baseline.json file, and the comparison of a run with a reference.

Every name loads its module on first use: a run's summary needs the run's identity (``run_info``), not the
baseline file's models or the comparison."""

from typing import TYPE_CHECKING

from evalkit._lazy import attach

if TYPE_CHECKING:
    from evalkit._baseline._compare import (
        Comparison,
        compare,
        model_drift,
        moved_slices,
        run_changes,
        same_suite,
        slice_deltas,
        version_warning,
    )
    from evalkit._baseline._file import (
        BASELINE_NAME,
        Accepted,
        Baseline,
        BaselineScore,
        accept,
        build_baseline,
        default_baseline_path,
        dump_baseline,
        load_baseline,
        run_score,
    )
    from evalkit._baseline._hashes import case_hashes, suite_case_hashes
    from evalkit._baseline._info import VERDICT_COLUMNS, RunInfo, majority_verdicts, max_repeats, run_info
    from evalkit._baseline._outputs import (
        OUTPUT_CAP,
        TEXT_CAP,
        StoredCheck,
        StoredOutput,
        output_rows,
        stored_outputs,
    )
    from evalkit._baseline._reference import Reference, baseline_info, load_reference

__getattr__, __dir__, __all__ = attach(__name__, __file__)
