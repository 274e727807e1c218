"""Where the cache lives on disk, and names shared by the modules that read it."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "EVALKIT_CACHE_DIR"
DEFAULT_CACHE_DIR = Path(".evalkit") / "cache"

_TEMP_SUFFIX = ".tmp"
_STALE_TEMP_SECONDS = 3600.0


def default_cache_dir() -> Path:
    """``$EVALKIT_CACHE_DIR`` if set and non-empty, else ``.evalkit/cache`` under the current directory."""
    env = os.environ.get(CACHE_DIR_ENV, "").strip()
    return (Path(env).expanduser() if env else DEFAULT_CACHE_DIR).absolute()


def _os_error(exc: OSError) -> str:
    return exc.strerror or str(exc)
