"""Shared pytest configuration: the local Anthropic-compatible server fixtures, `make_suite`, and where the
published judge data sets live (`shared_data`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["evalkit.testing.fixtures", "pytester"]

ROOT = Path(__file__).resolve().parents[1]

PARITY_PROMPT = "Answer with one word: even or odd.\n"


def parity_cases(n: int) -> list[dict[str, Any]]:
    """n cases whose input (the whole user turn) is "case cNNN", expecting "even" or "odd"; the first half are
    slice "low", the rest "high"."""
    return [
        {
            "id": f"c{i:03d}",
            "input": f"case c{i:03d}",
            "expected": "even" if i % 2 == 0 else "odd",
            "grader": "exact",
            "slice": "low" if i < n // 2 else "high",
        }
        for i in range(n)
    ]


def write_suite(
    root: Path,
    cases: int | Sequence[Mapping[str, Any]],
    *,
    name: str = "parity",
    model: str | None = "claude-sonnet-4-6",
    max_tokens: int = 8,
    toml: str = "",
    prompt: str | None = PARITY_PROMPT,
    files: Mapping[str, str] | None = None,
) -> Path:
    """Write a suite folder at `root` (made if need be; its files replaced) and return it.

    `cases` is a number of parity cases (:func:`parity_cases`) or the case rows themselves. suite.toml holds the
    name, then `toml`, then a [model] section unless `model` is None; prompt.md is written unless `prompt` is None;
    `files` are written beside them (a baseline.py, say)."""
    root.mkdir(parents=True, exist_ok=True)
    rows = parity_cases(cases) if isinstance(cases, int) else list(cases)
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    section = f'\n[model]\nname = "{model}"\nmax_tokens = {max_tokens}\n' if model is not None else ""
    (root / "suite.toml").write_text(f'name = "{name}"\n{toml}{section}', encoding="utf-8")
    if prompt is not None:
        (root / "prompt.md").write_text(prompt, encoding="utf-8")
    for rel, text in (files or {}).items():
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def make_suite(tmp_path: Path) -> Callable[..., Path]:
    """``make_suite(cases, *, name="parity", root=tmp_path / name, ...)``: a suite folder (see `write_suite`).

    The default is the Claude parity suite: ``make_suite(20)`` is 20 cases a local server can answer by
    the number in their user turn."""

    def make(cases: int | Sequence[Mapping[str, Any]], *, root: Path | None = None, **kw: Any) -> Path:
        return write_suite(root if root is not None else tmp_path / kw.get("name", "parity"), cases, **kw)

    return make


@pytest.fixture
def shared_data() -> Callable[[str], Path]:
    """A function giving the folder of a published data set by name: ../shared/data beside the repository, or
    $EVALKIT_SHARED_DATA; the test is skipped, with the reason, when it is absent."""

    def folder(name: str) -> Path:
        base = Path(os.environ.get("EVALKIT_SHARED_DATA", ROOT / ".." / "shared" / "data"))
        found = base / name
        if not found.is_dir():
            pytest.skip(f"{found} not found: put the published data there or set EVALKIT_SHARED_DATA")
        return found

    return folder
