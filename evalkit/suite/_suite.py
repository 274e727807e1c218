"""Suites: a folder `goldens/<name>/` (cases.jsonl + suite.toml) or a bare .jsonl file, once loaded."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from evalkit._fs import atomic_write_text
from evalkit.errors import Problem
from evalkit.suite._cases import Case, case_line, cases_version
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
    tools: list[dict[str, Any]] | None = None
    """The tools the claude system offers (tools.json), or None."""
    tool_module: UserModule | None = None
    """The suite's tools.py: functions named like tools answer calls the cases' recorded results do not."""

    def tool_functions(self) -> dict[str, Any]:
        """tools.py's function for each declared tool it defines."""
        module = self.tool_module.module if self.tool_module is not None else None
        names = [t["name"] for t in self.tools or []]
        return {n: getattr(module, n) for n in names if callable(getattr(module, n, None))}

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

    def shard(self, index: int, of: int) -> Suite:
        """The cases of shard `index` of `of` (1-based): each case goes to one shard by a hash of its id, the same
        on every machine and Python version. The suite's version stays the whole suite's, so the parts of one
        suite version can be merged."""
        if not (isinstance(index, int) and isinstance(of, int) and 1 <= index <= of):
            raise ValueError(f"shard {index}/{of}: give I/N with 1 <= I <= N")
        part = dataclasses.replace(self, cases=[c for c in self.cases if shard_of(c.id, of) == index])
        part.__dict__["version"] = self.version  # the cached version of the whole suite
        return part

    def __repr__(self) -> str:
        slices = ", ".join(f"{k} {n}" for k, n in self.slice_counts().items())
        shown = slices if len(slices) <= 200 else slices[:200] + " ..."
        return (
            f"Suite({self.name!r}, version {self.version}, {len(self.cases)} cases, from {str(self.base_dir)!r}; "
            f"slices: {shown})"
        )

    def slice_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(c.slice for c in self.cases).items()))

    def case(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError(case_id)

    def to_jsonl(self) -> str:
        """The cases as the JSONL text :meth:`save` writes: one line per case, in the suite's order."""
        return "".join(case_line(c) + "\n" for c in self.cases)

    def save(self, path: Path | None = None) -> Path:
        """Write the cases atomically, in the suite's order, each in the form it was written in.

        A case read from a file and not changed is written back as the very line it was read from; a case
        parsed from an object (`parse_case`) in that object's form and key order; any other case in the
        multi-check form. To see what changes and refuse invalid cases, use
        :func:`evalkit.suite.save_new_version`.
        """
        target = Path(path) if path is not None else self.cases_file
        atomic_write_text(target, self.to_jsonl())
        return target


def shard_of(case_id: str, of: int) -> int:
    """The shard (1 to `of`) a case id falls in: sha256 of the id, so stable across machines and versions.

    >>> [shard_of(i, 3) for i in ("tri-001", "tri-002", "tri-003")]
    [1, 1, 3]
    """
    return int(hashlib.sha256(case_id.encode("utf-8", "surrogatepass")).hexdigest()[:12], 16) % of + 1
