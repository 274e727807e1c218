"""What a run is compared against, from what a notebook passes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.api._run import Run


def reference_of(other: Run | str | Path) -> Any:
    """A `Reference` for a Run, a run directory, a baseline.json or a suite folder holding one."""
    from evalkit._baseline import load_reference

    return load_reference(Path(other) if isinstance(other, str | Path) else other.path)


def committed_baseline(suite_path: str | Path) -> Path | None:
    """The baseline.json committed beside a suite (its folder, or the folder of its .jsonl), if there is one."""
    path = Path(suite_path)
    committed = (path if path.is_dir() else path.parent) / "baseline.json"
    return committed if committed.is_file() else None
