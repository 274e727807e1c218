"""Runs kept on a store (``s3://...``): run or resume in the local copy, then publish, whatever way it ends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit._store import Location, publish_run
from evalkit.errors import EvalkitError, StorageError

if TYPE_CHECKING:
    from evalkit.api._run import Run


def folder_or_url(value: str | Path | None) -> Path | str | None:
    """A cache folder as a Path, a store URL as it is (a Path would fold its ``//``)."""
    from evalkit._store import is_url

    if value is None:
        return None
    return str(value) if is_url(value) else Path(value)


def published(execute: Callable[[], Run], local: Path, where: Location) -> Run:
    """Run `execute` (which runs in `local`), then publish the run to `where`; a run that stops with an error is
    published as it stands (interrupted), and the error then names the URL to resume from."""
    try:
        done = execute()
    except BaseException as exc:
        if (local / "manifest.json").is_file():
            try:
                publish_run(local, where)
            except StorageError as failed:
                exc.add_note(f"not published: {failed}")
            else:
                if isinstance(exc, EvalkitError) and exc.args and isinstance(exc.args[0], str):
                    exc.args = (exc.args[0].replace(str(local), where.url), *exc.args[1:])
                exc.add_note(
                    f"published as it stands to {where.url}; finish it with evalkit run --resume {where.url}"
                )
        raise
    publish_run(done.path, where)
    done.url = where.url
    return done


def republish(run: Run) -> None:
    """Publish a store run's local copy again, after something was added to it (the report ``--report`` writes)."""
    from evalkit._store import parse_url

    if run.url is not None:
        publish_run(run.path, parse_url(run.url))
