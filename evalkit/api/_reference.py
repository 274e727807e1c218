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
