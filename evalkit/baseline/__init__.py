"""Baselines and references: the baseline.json file, and the comparison of a run with a reference.

Every name loads its module on first use: a run's summary needs the run's identity (``run_info``), not the
baseline file's models or the comparison."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

_LAZY = {
    "Comparison": "evalkit.baseline._compare",
    "compare": "evalkit.baseline._compare",
    "model_drift": "evalkit.baseline._compare",
    "moved_slices": "evalkit.baseline._compare",
    "run_changes": "evalkit.baseline._compare",
    "same_suite": "evalkit.baseline._compare",
    "slice_deltas": "evalkit.baseline._compare",
    "version_warning": "evalkit.baseline._compare",
    "BASELINE_NAME": "evalkit.baseline._file",
    "Accepted": "evalkit.baseline._file",
    "Baseline": "evalkit.baseline._file",
    "BaselineScore": "evalkit.baseline._file",
    "accept": "evalkit.baseline._file",
    "build_baseline": "evalkit.baseline._file",
    "default_baseline_path": "evalkit.baseline._file",
    "dump_baseline": "evalkit.baseline._file",
    "load_baseline": "evalkit.baseline._file",
    "run_score": "evalkit.baseline._file",
    "case_hashes": "evalkit.baseline._hashes",
    "suite_case_hashes": "evalkit.baseline._hashes",
    "VERDICT_COLUMNS": "evalkit.baseline._info",
    "RunInfo": "evalkit.baseline._info",
    "majority_verdicts": "evalkit.baseline._info",
    "max_repeats": "evalkit.baseline._info",
    "run_info": "evalkit.baseline._info",
    "OUTPUT_CAP": "evalkit.baseline._outputs",
    "TEXT_CAP": "evalkit.baseline._outputs",
    "StoredCheck": "evalkit.baseline._outputs",
    "StoredOutput": "evalkit.baseline._outputs",
    "output_rows": "evalkit.baseline._outputs",
    "stored_outputs": "evalkit.baseline._outputs",
    "Reference": "evalkit.baseline._reference",
    "baseline_info": "evalkit.baseline._reference",
    "load_reference": "evalkit.baseline._reference",
}


def __getattr__(name: str) -> object:
    from evalkit._lazy import load

    return load(__name__, _LAZY, name)


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
