"""Baselines and references: the baseline.json file, and the comparison of a run with a reference."""

from evalkit.baseline._compare import (
    Comparison,
    compare,
    model_drift,
    moved_slices,
    run_changes,
    same_suite,
    slice_deltas,
    version_warning,
)
from evalkit.baseline._file import (
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
from evalkit.baseline._hashes import case_hashes, suite_case_hashes
from evalkit.baseline._info import VERDICT_COLUMNS, RunInfo, majority_verdicts, max_repeats, run_info
from evalkit.baseline._outputs import (
    OUTPUT_CAP,
    TEXT_CAP,
    StoredCheck,
    StoredOutput,
    output_rows,
    stored_outputs,
)
from evalkit.baseline._reference import Reference, baseline_info, load_reference

__all__ = [
    "BASELINE_NAME",
    "OUTPUT_CAP",
    "TEXT_CAP",
    "VERDICT_COLUMNS",
    "Accepted",
    "Baseline",
    "BaselineScore",
    "Comparison",
    "Reference",
    "RunInfo",
    "StoredCheck",
    "StoredOutput",
    "accept",
    "baseline_info",
    "build_baseline",
    "case_hashes",
    "compare",
    "default_baseline_path",
    "dump_baseline",
    "load_baseline",
    "load_reference",
    "majority_verdicts",
    "max_repeats",
    "model_drift",
    "moved_slices",
    "output_rows",
    "run_changes",
    "run_info",
    "run_score",
    "same_suite",
    "slice_deltas",
    "stored_outputs",
    "suite_case_hashes",
    "version_warning",
]
