"""Whether a run may be resumed with the suite, system and judge loaded now.

(The command line's checks of its own options against a run live in `_resume.py`.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit._results import Manifest
from evalkit.errors import EvalkitError
from evalkit.suite import Suite

# describe() fields that say where a system or judge came from, not what it does
_WHERE_FROM = frozenset({"prompt_path", "origin"})


def changes(recorded: dict[str, Any], now: dict[str, Any], prefix: str = "") -> list[str]:
    """What differs between a manifest's description of a system (or judge) and the one loaded now."""
    if not recorded or not now:
        return []
    return [
        f"the {prefix}{key} has changed since the run started ({recorded.get(key)!r} -> {now.get(key)!r})"
        for key in sorted(set(recorded) | set(now))
        if key not in _WHERE_FROM
        and recorded.get(key) != now.get(key)
        # a function made in a session has no file to hash: its code cannot be compared
        and not (key == "code_hash" and None in (recorded.get(key), now.get(key)))
    ]


def check_resumable(
    resume: Path, manifest: Manifest, suite: Suite, system: dict[str, Any], judge: dict[str, Any] | None
) -> None:
    """Raise EvalkitError, saying what changed, if resuming would mix two setups in one run."""
    if manifest.suite_version != suite.version:
        raise EvalkitError(
            f"{resume}: the run is of suite version {manifest.suite_version}, but {suite.name} is now "
            f"{suite.version}; start a new run instead of resuming"
        )
    changed = changes(manifest.system, system) + changes(manifest.judge or {}, judge or {}, "judge ")
    if bool(manifest.judge) != bool(judge):
        changed.append(
            "the run was judged, but no judge is available now (set ANTHROPIC_API_KEY, or --judge on)"
            if manifest.judge
            else "the run was not judged, but now a judge would be asked (pass --judge off)"
        )
    if changed:
        raise EvalkitError(
            f"{resume}: {'; '.join(changed)}. Resuming would mix two setups in one run: start a new run "
            "instead (or undo the change)"
        )
