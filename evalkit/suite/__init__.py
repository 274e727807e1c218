"""Golden sets: case forms, check models, loading and validation with located errors, the suite version."""

from evalkit.suite._cases import Case, cases_version, parse_case
from evalkit.suite._checks import (
    CitationsSubsetCheck,
    ContainsAllCheck,
    ContainsNoneCheck,
    ExactCheck,
    JsonValidCheck,
    JudgeCheck,
    MaxWordsCheck,
    MinWordsCheck,
    NoEmailExceptCheck,
    RegexCheck,
    SchemaCheck,
    SqlRowsMatchCheck,
    SumsCheck,
    UserCheck,
    covers,
)
from evalkit.suite._load import load_suite, validate_suite
from evalkit.suite._registry import (
    UserModule,
    check,
    global_checks,
    load_user_module,
)
from evalkit.suite._schemas import (
    UNSENDABLE_SCHEMA_HINT,
    RemoteSchemaRefused,
    offline_registry,
    schema_warnings,
    unsendable_schema,
)
from evalkit.suite._settings import DEFAULT_JUDGE_MODEL, JudgeSettings, ModelSettings, SuiteConfig
from evalkit.suite._suite import Suite

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "UNSENDABLE_SCHEMA_HINT",
    "Case",
    "CitationsSubsetCheck",
    "ContainsAllCheck",
    "ContainsNoneCheck",
    "ExactCheck",
    "JsonValidCheck",
    "JudgeCheck",
    "JudgeSettings",
    "MaxWordsCheck",
    "MinWordsCheck",
    "ModelSettings",
    "NoEmailExceptCheck",
    "RegexCheck",
    "RemoteSchemaRefused",
    "SchemaCheck",
    "SqlRowsMatchCheck",
    "Suite",
    "SuiteConfig",
    "SumsCheck",
    "UserCheck",
    "UserModule",
    "cases_version",
    "check",
    "covers",
    "global_checks",
    "load_suite",
    "load_user_module",
    "offline_registry",
    "parse_case",
    "schema_warnings",
    "unsendable_schema",
    "validate_suite",
]
