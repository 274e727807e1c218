"""Where the published judge data sets live: ../shared/data beside the repository, or $EVALKIT_SHARED_DATA."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def shared_data() -> Callable[[str], Path]:
    """A function giving the folder of a data set by name, skipping the test with the reason when absent."""

    def folder(name: str) -> Path:
        base = Path(os.environ.get("EVALKIT_SHARED_DATA", ROOT / ".." / "shared" / "data"))
        found = base / name
        if not found.is_dir():
            pytest.skip(f"{found} not found: put the published data there or set EVALKIT_SHARED_DATA")
        return found

    return folder
