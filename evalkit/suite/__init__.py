"""Golden sets: case forms, check models, loading and validation with located errors, the suite version."""

from evalkit._lazy import INTERNAL, attach
from evalkit.suite._cases import Case, is_conversation, parse_case
from evalkit.suite._curate import case_text, filter_cases, near_duplicates, slice_coverage
from evalkit.suite._load import load_suite, validate_suite
from evalkit.suite._registry import check
from evalkit.suite._save import SaveResult, new_case_template, next_case_id, save_new_version
from evalkit.suite._settings import JudgeSettings, ModelSettings, SuiteConfig
from evalkit.suite._suite import Suite
from evalkit.suite._transcripts import Candidate, promote, read_transcripts

if INTERNAL:
    from evalkit.suite._cases import case_line, cases_version, written_form
    from evalkit.suite._checks import (
        CitationsSubsetCheck,
        ContainsAllCheck,
        ContainsNoneCheck,
        ExactCheck,
        JsonValidCheck,
        JudgeCheck,
        MaxToolCallsCheck,
        MaxWordsCheck,
        MinWordsCheck,
        NoEmailExceptCheck,
        RegexCheck,
        SchemaCheck,
        SqlRowsMatchCheck,
        SumsCheck,
        ToolCalledCheck,
        ToolNotCalledCheck,
        ToolSequenceCheck,
        UserCheck,
        covers,
    )
    from evalkit.suite._curate import check_kinds
    from evalkit.suite._registry import UserModule, global_checks, load_user_module
    from evalkit.suite._save import case_object, check_case_text, with_case
    from evalkit.suite._schemas import (
        UNSENDABLE_SCHEMA_HINT,
        offline_registry,
        schema_warnings,
        unsendable_schema,
    )
    from evalkit.suite._settings import DEFAULT_JUDGE_MODEL
    from evalkit.suite._suite import shard_of

__getattr__, __dir__, __all__ = attach(__name__, __file__)
