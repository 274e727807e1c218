"""Suites: a folder `goldens/<name>/` (cases.jsonl + suite.toml) or a bare .jsonl file, once loaded."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from evalkit._fs import atomic_write_text
from evalkit.errors import Problem
from evalkit.suite._cases import Case, cases_to_jsonl, cases_version
from evalkit.suite._registry import UserModule
from evalkit.suite._settings import SuiteConfig


@dataclass
class Suite:
    """A loaded, validated suite."""

    config: SuiteConfig
    cases: list[Case]
    cases_file: Path
    root: Path | None = None
    output_schema: dict[str, Any] | None = None
    user: UserModule | None = None
    lines: dict[str, int] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.config.name

    @cached_property
    def version(self) -> str:
        return cases_version(self.cases, extra=self.output_schema)

    @property
    def base_dir(self) -> Path:
        return self.root if self.root is not None else self.cases_file.parent

    def resolve(self, relative: str) -> Path:
        return self.base_dir / relative

    def slice_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(c.slice for c in self.cases).items()))

    def case(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError(case_id)

    def save(self, path: Path | None = None) -> Path:
        """Write the cases atomically in stable order (multi-check form)."""
        target = path or self.cases_file
        atomic_write_text(target, cases_to_jsonl(self.cases))
        return target
