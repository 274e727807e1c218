"""Baselines and references: the baseline.json file, and the comparison of a run with a reference.

Every name loads its module on first use: a run's summary needs the run's identity (``run_info``), not the
baseline file's models or the comparison."""

from typing import TYPE_CHECKING

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

_LAZY = {
    "Comparison": "evalkit._baseline._compare",
    "compare": "evalkit._baseline._compare",
    "model_drift": "evalkit._baseline._compare",
    "moved_slices": "evalkit._baseline._compare",
    "run_changes": "evalkit._baseline._compare",
    "same_suite": "evalkit._baseline._compare",
    "slice_deltas": "evalkit._baseline._compare",
    "version_warning": "evalkit._baseline._compare",
    "BASELINE_NAME": "evalkit._baseline._file",
    "Accepted": "evalkit._baseline._file",
    "Baseline": "evalkit._baseline._file",
    "BaselineScore": "evalkit._baseline._file",
    "accept": "evalkit._baseline._file",
    "build_baseline": "evalkit._baseline._file",
    "default_baseline_path": "evalkit._baseline._file",
    "dump_baseline": "evalkit._baseline._file",
    "load_baseline": "evalkit._baseline._file",
    "run_score": "evalkit._baseline._file",
    "case_hashes": "evalkit._baseline._hashes",
    "suite_case_hashes": "evalkit._baseline._hashes",
    "VERDICT_COLUMNS": "evalkit._baseline._info",
    "RunInfo": "evalkit._baseline._info",
    "majority_verdicts": "evalkit._baseline._info",
    "max_repeats": "evalkit._baseline._info",
    "run_info": "evalkit._baseline._info",
    "OUTPUT_CAP": "evalkit._baseline._outputs",
    "TEXT_CAP": "evalkit._baseline._outputs",
    "StoredCheck": "evalkit._baseline._outputs",
    "StoredOutput": "evalkit._baseline._outputs",
    "output_rows": "evalkit._baseline._outputs",
    "stored_outputs": "evalkit._baseline._outputs",
    "Reference": "evalkit._baseline._reference",
    "baseline_info": "evalkit._baseline._reference",
    "load_reference": "evalkit._baseline._reference",
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
