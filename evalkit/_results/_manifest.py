"""manifest.json: what a run was, and the git commit it ran at."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalkit._results._schema import now_iso
from evalkit._version import __version__

RESULTS_SCHEMA_VERSION = 2
"""2: check status not_judged, error_kind on cases and checks, judge_criteria in the frame (docs/results.md)."""
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def git_commit(cwd: Path | None = None) -> str | None:
    """The commit checked out in the git work tree holding `cwd` (default: the current directory), or None.

    Read from the repository's files rather than by running git: starting a process from a large one took
    15-20 ms at the start of every run. Follows `.git` files (worktrees, submodules) and packed refs; honours
    GIT_DIR.
    """
    try:
        gitdir = _git_dir(Path(cwd or Path.cwd()).resolve())
        if gitdir is None:
            return None
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if _SHA.fullmatch(head) else None  # a detached HEAD
        ref = head[4:].strip()
        common = gitdir
        if (gitdir / "commondir").is_file():  # a linked worktree keeps its branches in the main repository
            common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        for base in (gitdir, common):
            if (base / ref).is_file():
                sha = (base / ref).read_text(encoding="utf-8").strip()
                return sha if _SHA.fullmatch(sha) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                sha, _, name = line.partition(" ")
                if name == ref and _SHA.fullmatch(sha):
                    return sha
    except (OSError, UnicodeDecodeError):
        return None
    return None  # an unborn branch: no commit yet


def _git_dir(start: Path) -> Path | None:
    if os.environ.get("GIT_DIR"):
        return (start / os.environ["GIT_DIR"]).resolve()
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            text = dot_git.read_text(encoding="utf-8").strip()
            return (folder / text[len("gitdir:") :].strip()).resolve() if text.startswith("gitdir:") else None
    return None


class Manifest(BaseModel):
    """What a run was: enough to reproduce it and to know what a score is a score of."""

    schema_version: int = RESULTS_SCHEMA_VERSION
    run_id: str
    suite: str
    suite_version: str
    suite_path: str
    suite_relpath: str | None = None
    """The suite's path relative to the folder the run started in (None outside it): found again there on another
    machine (a CI job, a colleague's checkout), where `suite_path` does not exist."""
    cases: int
    repeats: int = 1
    system: dict[str, Any]
    judge: dict[str, Any] | None = None
    cache: dict[str, Any] = Field(default_factory=dict)
    concurrency: int = 8
    batch: bool = False
    batch_ids: dict[str, str] = Field(default_factory=dict)
    evalkit_version: str = __version__
    python: str = Field(default_factory=lambda: sys.version.split()[0])
    git_commit: str | None = None
    command: list[str] = Field(default_factory=lambda: list(sys.argv))
    started_at: str = Field(default_factory=now_iso)
    ended_at: str | None = None
    status: Literal["running", "complete", "interrupted"] = "running"
    stopped_reason: str | None = None
    """Why an interrupted run stopped and how to finish it, when it stopped itself (a spending cap)."""
    max_cost_usd: float | None = None
    """The spending cap the run was started (or last resumed) with."""
    shard: list[int] | None = None
    """``[I, N]`` for a run of shard I of N of the suite (``--shard I/N``); None for the whole suite."""
    merged_from: list[str] | None = None
    """The run ids of the shard runs ``evalkit merge`` joined into this run."""
    prompt_cache: str | None = None
    """Whether its requests asked for prompt caching: on, off, 5m or 1h (None: before the option existed)."""

    def suite_location(self) -> str:
        """Where the suite is on this machine: `suite_path`, or `suite_relpath` under the current folder when only
        that exists (a run made on another machine)."""
        if self.suite_relpath and not Path(self.suite_path).exists() and Path(self.suite_relpath).exists():
            return self.suite_relpath
        return self.suite_path


def relative_to_cwd(path: Path) -> str | None:
    """`path` relative to the current folder, when it is under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return None
