"""The public surface: the faces users and notebooks import, each pinned here, so a change to one is deliberate.

The root holds the verbs and nouns (``ek.run``, ``ek.Run``, ``ek.load_suite``, ...); ``suite``, ``graders``,
``stats``, ``calibration``, ``probes``, ``charts``, ``widgets``, ``testing``, ``datasets`` and ``errors`` hold what
notebooks and user code need. The plumbing is private: packages named with a leading underscore (``_runner``,
``_cache``, ...), and the names a face lists under ``if INTERNAL:`` for evalkit's own packages. A name added to or
removed from a face fails ``test_public_names_are_pinned`` until this file says so too.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import evalkit
from evalkit._lazy import face

ROOT = Path(__file__).resolve().parents[1]
MAX_PUBLIC_NAMES = 210

PUBLIC: dict[str, list[str]] = {
    "evalkit": [
        "Case",
        "EvalkitError",
        "GateOutcome",
        "GateVerdict",
        "Grade",
        "HTMLReport",
        "Problem",
        "Run",
        "RunComparison",
        "Suite",
        "SuiteValidationError",
        "System",
        "__version__",
        "check",
        "estimate",
        "gate",
        "grade_case",
        "history",
        "load_run",
        "load_suite",
        "load_system",
        "resume",
        "run",
        "run_async",
        "runs",
        "validate_suite",
    ],
    "evalkit.api": [
        "HTMLReport",
        "Run",
        "RunComparison",
        "estimate",
        "gate",
        "history",
        "load_run",
        "merge_runs",
        "resume",
        "run",
        "run_async",
        "runs",
    ],
    "evalkit.calibration": [
        "Agreement",
        "Calibration",
        "CalibrationRecord",
        "CalibrationState",
        "Confusion",
        "JudgeTrust",
        "Label",
        "PPIEstimate",
        "PPI_MIN_LABELS",
        "ReviewSample",
        "agreement",
        "agreement_from_files",
        "calibrate",
        "calibration_record",
        "calibration_state",
        "confusion_rates",
        "corrected_pass_rate",
        "format_agreement",
        "format_calibration",
        "judge_trust",
        "krippendorff_alpha",
        "ppi_pass_rate",
        "read_calibration_record",
        "read_labels",
        "read_ratings",
        "review_items",
        "review_sample",
        "write_calibration_record",
        "write_labels",
        "write_ratings",
        "write_review_sample",
    ],
    "evalkit.charts": [
        "CELL_SELECTION",
        "confusion_chart",
        "cost_latency_chart",
        "effect_chart",
        "history_chart",
        "mde_chart",
        "mde_curve",
        "noise_floor_chart",
        "noise_floor_frame",
        "slice_coverage_chart",
        "slice_delta_chart",
        "slice_pass_rate_chart",
        "to_svg",
    ],
    "evalkit.cli": [
        "main",
    ],
    "evalkit.datasets": [
        "LLMBar",
        "PandaLM",
        "load_llmbar",
        "load_pandalm",
    ],
    "evalkit.errors": [
        "CacheError",
        "CacheMiss",
        "CallError",
        "CallErrorKind",
        "CaseDefect",
        "CheckError",
        "CheckTimeout",
        "CorruptCacheEntry",
        "CorruptCacheEntryWarning",
        "EditedCacheEntry",
        "EvalkitError",
        "EvalkitWarning",
        "GrainError",
        "JudgeError",
        "OutputTooDeep",
        "Problem",
        "RecordsError",
        "RemoteSchemaRefused",
        "RulesFileError",
        "SpendingStopped",
        "StorageError",
        "SuiteValidationError",
        "SystemLoadError",
        "TranscriptError",
        "UnverifiedCacheEntryWarning",
        "UserCheckFailed",
    ],
    "evalkit.graders": [
        "CheckOutcome",
        "FENCE_TAGS",
        "Grade",
        "GradingContext",
        "Judge",
        "JudgeGrade",
        "PairwiseJudge",
        "PromptTemplate",
        "RubricVerdict",
        "grade_case",
        "grade_check",
        "load_template",
        "neutralise",
        "normalize",
        "parse_number",
        "rubric_prompt",
    ],
    "evalkit.probes": [
        "ATTACKS",
        "InjectionEffect",
        "InjectionProbe",
        "LiveOptions",
        "LivePosition",
        "PADDINGS",
        "PairedDifference",
        "PositionProbe",
        "SelfPreference",
        "VerbosityEffect",
        "VerbosityProbe",
        "attack",
        "consistency_rows",
        "format_injection",
        "format_live_position",
        "format_position",
        "format_verbosity",
        "injection_effect",
        "injection_probe",
        "injection_rows",
        "pad",
        "paired_difference",
        "position_by",
        "position_from_file",
        "position_live",
        "position_probe",
        "position_rows",
        "position_table",
        "read_verdicts",
        "self_preference",
        "verbosity_effect",
        "verbosity_probe",
        "verbosity_rows",
        "write_verdicts",
    ],
    "evalkit.pytest_plugin": [
        "evalkit_run",
        "pytest_addoption",
        "pytest_collection_modifyitems",
        "pytest_configure",
    ],
    "evalkit.stats": [
        "CostLatency",
        "Interval",
        "PairedComparison",
        "PowerPlan",
        "case_verdicts",
        "cases_needed",
        "clustered_pass_rate",
        "compare_runs",
        "cost_latency",
        "dev_vs_holdout",
        "estimate_mde",
        "flip_rates",
        "independent_interval",
        "mcnemar",
        "mcnemar_cases_needed",
        "minimum_detectable_effect",
        "newcombe_paired",
        "noise_floor",
        "paired_means_interval",
        "pass_rate",
        "sign_flip_test",
        "t_interval",
        "wilson_interval",
    ],
    "evalkit.suite": [
        "Candidate",
        "Case",
        "JudgeSettings",
        "ModelSettings",
        "SaveResult",
        "Suite",
        "SuiteConfig",
        "case_text",
        "check",
        "filter_cases",
        "is_conversation",
        "load_suite",
        "near_duplicates",
        "new_case_template",
        "next_case_id",
        "parse_case",
        "promote",
        "read_transcripts",
        "save_new_version",
        "slice_coverage",
        "validate_suite",
    ],
    "evalkit.testing": [
        "FAULT_KINDS",
        "FaultKind",
        "FaultPlan",
        "JudgeRule",
        "LocalAnthropicServer",
        "PINNED_MODEL_IDS",
        "RateLimits",
        "Reply",
        "RequestRecord",
        "Responder",
        "SimulatedJudge",
        "count_input_tokens",
        "estimate_tokens",
        "simulated_api",
    ],
    "evalkit.widgets": [
        "CaseBrowser",
        "CaseEditor",
        "DisagreementBrowser",
        "FlippedCases",
        "Labeller",
        "SliceFailures",
    ],
}


def _faces() -> list[str]:
    """Every public face: the root, the errors module, and each package without a leading underscore."""
    subpackages = [m.name for m in pkgutil.iter_modules(evalkit.__path__) if m.ispkg]
    return sorted(
        ["evalkit", "evalkit.errors", *(f"evalkit.{m}" for m in subpackages if not m.startswith("_"))]
    )


def test_every_face_is_pinned() -> None:
    assert sorted(PUBLIC) == _faces()


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_public_names_are_pinned(package: str) -> None:
    names = getattr(importlib.import_module(package), "__all__", None)
    assert names is not None, f"{package} has no __all__"
    assert len(names) == len(set(names)), f"{package}.__all__ lists a name twice"
    added = sorted(set(names) - set(PUBLIC[package]))
    removed = sorted(set(PUBLIC[package]) - set(names))
    assert not added and not removed, (
        f"{package}.__all__ changed: added {added}, removed {removed}; if that is meant, change PUBLIC in "
        "tests/test_public_api.py too"
    )
    assert PUBLIC[package] == sorted(PUBLIC[package]), "keep PUBLIC's lists sorted"


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_every_public_name_imports(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, f"{package}.__all__ names what it cannot import: {missing}"


def test_the_public_surface_is_small() -> None:
    names = {name for names in PUBLIC.values() for name in names}
    assert len(names) <= MAX_PUBLIC_NAMES, f"{len(names)} public names; the surface is meant to stay small"


def test_a_name_means_one_thing() -> None:
    # a name exported by two faces is one object: the root re-exports its verbs and nouns, nothing else repeats
    seen: dict[str, object] = {}
    for package, names in PUBLIC.items():
        module = importlib.import_module(package)
        for name in names:
            value = getattr(module, name)
            if name in seen:
                assert seen[name] is value, f"{name} names two different things ({package})"
                assert "evalkit" in [p for p, ns in PUBLIC.items() if name in ns], f"{name} is exported twice"
            seen[name] = value


def _inits() -> list[Path]:
    return sorted(p for p in (ROOT / "evalkit").rglob("__init__.py") if p.parent.name != "prompts")


@pytest.mark.parametrize("init", _inits(), ids=lambda p: str(p.parent.relative_to(ROOT)))
def test_each_face_writes_each_name_once(init: Path) -> None:
    # __all__ and the lazy table are derived from the face's imports (evalkit._lazy.attach), never listed again
    tree = ast.parse(init.read_text(encoding="utf-8"))
    assigned = {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    assert not assigned & {"__all__", "_LAZY"}, f"{init} lists names a second time"
    imported = [
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evalkit.")
        for alias in node.names
    ]
    assert len(imported) == len(set(imported)), f"{init} imports a name twice"
    assert "attach(__name__, __file__)" in init.read_text(encoding="utf-8")


def test_a_face_exports_its_imports_and_keeps_internal_ones_lazy() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from evalkit._lazy import INTERNAL, attach\n"
        "from evalkit.x._a import Now\n"
        "if TYPE_CHECKING:\n"
        "    from evalkit.x._b import later, Later as Renamed\n"
        "if INTERNAL:\n"
        "    from evalkit.x._c import helper\n"
    )
    lazy, exported = face(source)
    assert exported == ["Now", "Renamed", "later"]
    assert lazy == {
        "later": ("evalkit.x._b", "later"),
        "Renamed": ("evalkit.x._b", "Later"),
        "helper": ("evalkit.x._c", "helper"),
    }


def test_an_internal_name_loads_on_first_use_and_is_not_exported() -> None:
    import evalkit.suite as suite

    assert "case_line" not in suite.__all__ and "case_line" in dir(suite)
    from evalkit.suite import case_line

    assert case_line is suite.case_line
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = suite.nope  # type: ignore[attr-defined]


def test_import_evalkit_loads_neither_anthropic_nor_polars() -> None:
    code = "import sys, evalkit; print(sorted(m for m in ('anthropic', 'polars') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
