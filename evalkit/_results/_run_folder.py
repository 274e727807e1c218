"""The run-folder protocol: what a reader of a run needs (folder, manifest, suite, check rows), and a plain
run folder that provides it.

The front door's `Run` shows calibration figures, so calibration reads runs through this protocol instead of
importing the front door (that would be an import circle); a `Run` passed in is used as it is.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from evalkit._store import is_url, parse_url, pull_run
from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import polars as pl

    from evalkit._results import Manifest
    from evalkit.suite import Suite


class RunLike(Protocol):
    """What calibration reads of a run: its folder, manifest, suite and check rows (a `Run` is one)."""

    @property
    def path(self) -> Path: ...

    @property
    def manifest(self) -> Manifest: ...

    @property
    def suite(self) -> Suite: ...

    def checks(self) -> pl.DataFrame: ...


class RunFolder:
    """A run directory, read the first time something is asked of it (the front door's `Run` is one)."""

    def __init__(self, path: str | Path, *, suite: Suite | None = None) -> None:
        self.url: str | None = None
        """The store URL the run was read from (``s3://...``); None for a local folder."""
        if is_url(path):
            where = parse_url(path)
            self.url = where.url
            path = pull_run(where)  # a local copy, brought up to date: everything below reads files
        self.path = Path(path)
        if not (self.path / "manifest.json").is_file():
            raise EvalkitError(
                f"{self.path}: not a run directory (no manifest.json); pass a folder under runs/ that "
                "`evalkit run` or `ek.run` wrote"
            )
        self._suite = suite

    @property
    def location(self) -> str:
        """Where the run is kept: its store URL, or its folder."""
        return self.url or str(self.path)

    @cached_property
    def _loaded(self) -> tuple[Manifest, pl.DataFrame]:
        from evalkit._results import read_run

        return read_run(self.path)

    @property
    def manifest(self) -> Manifest:
        """The run's manifest: suite and version, system, judge, cache, status, times."""
        return self._loaded[0]

    @property
    def suite(self) -> Suite:
        """The suite the run was of (loaded from the path the manifest records when not given)."""
        if self._suite is None:
            from evalkit.suite import load_suite

            self._suite = load_suite(self.manifest.suite_location())
        return self._suite

    def checks(self) -> pl.DataFrame:
        """One row per (case, repeat, check): every check's verdict, score, detail and judge fields."""
        return self._loaded[1]


def load_run_like(run: RunLike | str | Path) -> RunLike:
    """`run` itself, or the run folder at that path."""
    return RunFolder(run) if isinstance(run, str | Path) else run
