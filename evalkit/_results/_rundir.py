"""A run's folder: manifest.json, results.jsonl (the journal) and results.parquet, and reading a run back."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl

from evalkit._failpoints import reached
from evalkit._fs import atomic_write_bytes, atomic_write_text, atomic_writer
from evalkit._records import check_format_version, decode_document
from evalkit._results._frame import CHECK_ROW_SCHEMA, check_rows, frame_of, parquet_bytes, rows_of
from evalkit._results._journal import Journal
from evalkit._results._manifest import RESULTS_SCHEMA_VERSION, Manifest
from evalkit._results._schema import CaseResult
from evalkit._results._upgrade import ADDED_COLUMNS, upgrade_frame
from evalkit.errors import EvalkitError


class RunDir:
    """A run's folder. The journal is append-only while running; finalising compacts it and writes parquet."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    @property
    def journal_path(self) -> Path:
        return self.path / "results.jsonl"

    @property
    def parquet_path(self) -> Path:
        return self.path / "results.parquet"

    def write_manifest(self, manifest: Manifest) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.manifest_path, manifest.model_dump_json(indent=2) + "\n")

    def read_manifest(self) -> Manifest:
        if not self.manifest_path.exists():
            raise EvalkitError(
                f"{self.path}: no manifest.json here; is this a run directory (runs/<run-id>/)?"
            )
        try:
            text = self.manifest_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EvalkitError(f"{self.manifest_path}: unreadable manifest ({exc})") from None
        data = decode_document(text, str(self.manifest_path))
        if isinstance(data, dict):
            check_format_version(data.get("schema_version"), RESULTS_SCHEMA_VERSION, str(self.manifest_path))
        try:
            return Manifest.model_validate(data)
        except ValueError as exc:
            raise EvalkitError(f"{self.manifest_path}: unreadable manifest ({exc})") from None

    def read_journal(self, run_id: str | None = None) -> list[CaseResult]:
        """Every complete journal line, the last one winning per (case, repeat); a torn last line is ignored.

        With `run_id`, lines of other runs (pasted in, or from a copied journal) are ignored too."""
        if not self.journal_path.exists():
            return []
        latest: dict[tuple[str, int], CaseResult] = {}
        with self.journal_path.open("r", encoding="utf-8") as fh:
            for line in fh:
                if not line.endswith("\n"):
                    break  # torn by a crash mid-write: that case simply runs again
                try:
                    result = CaseResult.model_validate_json(line)
                except ValueError:
                    continue
                if run_id is None or result.run_id == run_id:
                    latest[result.key] = result
        return list(latest.values())

    def repair_journal(self) -> int:
        """Cut a line torn by a crash off the end of the journal, so appends start on a fresh line.

        Returns the number of bytes removed."""
        if not self.journal_path.exists():
            return 0
        data = self.journal_path.read_bytes()
        keep = data.rfind(b"\n") + 1
        if keep == len(data):
            return 0
        with self.journal_path.open("r+b") as fh:
            fh.truncate(keep)
        return len(data) - keep

    def finalize(self, results: list[CaseResult]) -> None:
        """Write these results as the run's journal and results.parquet, both atomically."""
        ordered = sorted(results, key=lambda r: (r.case_id, r.repeat))
        text = "".join(r.model_dump_json() + "\n" for r in ordered)
        atomic_write_text(self.journal_path, text)
        atomic_write_bytes(self.parquet_path, parquet_bytes(check_rows(ordered)))

    def finish(self, journal: Journal | None = None, chunk: int = 2000, run_id: str | None = None) -> int:
        """Compact the journal to its last line per (case, repeat) and write results.parquet, streaming.

        Works on the journal's text rather than result models, so a 10,000-case run never holds them all. Given
        the session's `journal`, its lines are not parsed again: their keys and rows are already known. Other
        lines are kept only if they are results (as `read_journal` reads them) and, given `run_id`, of this
        run: a line that is not would otherwise replace a case's real result."""
        reached("finish:started")
        latest: dict[tuple[str, int], bytes] = {}
        session: list[bytes] = []  # this session's lines, whose keys `journal` knows

        def parse_head(line: bytes) -> None:
            try:
                result = CaseResult.model_validate_json(line)
            except ValueError:
                return
            if run_id is None or result.run_id == run_id:
                latest[result.key] = line

        if self.journal_path.exists():
            with self.journal_path.open("rb") as fh:
                position = 0
                for line in fh:
                    if not line.endswith(b"\n"):
                        break  # torn by a crash mid-write
                    if journal is not None and position >= journal.start:
                        session.append(line)
                    else:
                        parse_head(line)
                    position += len(line)
        own = journal if journal is not None and journal.wrote(session) else None  # None: parse them all
        new_keys = set(own.keys) if own is not None else set()
        if own is not None:
            latest.update(zip(own.keys, session, strict=True))
        else:
            for line in session:
                parse_head(line)
        del session
        keys = sorted(latest)

        def compact() -> None:
            with atomic_writer(self.journal_path) as out:
                out.writelines(latest[key] for key in keys)

        # written, and synced to disk, while the parquet is built: the two syncs overlap
        with _in_background(compact):
            self._write_parquet(latest, keys, new_keys, own, chunk)
        reached("finish:parquet")
        return len(keys)

    def _write_parquet(
        self,
        latest: dict[tuple[str, int], bytes],
        keys: list[tuple[str, int]],
        new_keys: set[tuple[str, int]],
        own: Journal | None,
        chunk: int,
    ) -> None:
        # check rows: parsed from the lines this session did not write, and the session's own for the rest,
        # then put in key order by row number (a sort on the string keys would cost more memory than the rows)
        frames: list[pl.DataFrame] = []
        spans: dict[tuple[str, int], tuple[int, int]] = {}
        pending: list[dict[str, Any]] = []
        offset = 0
        for key in keys:
            if key in new_keys:
                continue
            rows = list(rows_of([json.loads(latest[key])]))
            spans[key] = (offset, len(rows))
            offset += len(rows)
            pending.extend(rows)
            if len(pending) >= chunk:
                frames.append(frame_of(pending))
                pending = []
        if pending:
            frames.append(frame_of(pending))
        if own is not None:
            for key, (start, count) in zip(own.keys, own.spans(), strict=True):
                spans[key] = (offset + start, count)
            frames.append(own.rows())
        frame = pl.concat(frames) if frames else frame_of([])
        if own is not None:  # the session's rows are in the order its cases finished
            order = [row for key in keys for row in range(spans[key][0], spans[key][0] + spans[key][1])]
            frame = frame[pl.Series(order, dtype=pl.UInt32)]
        atomic_write_bytes(self.parquet_path, parquet_bytes(frame))


@contextlib.contextmanager
def _in_background(work: Callable[[], None]) -> Iterator[None]:
    """Run `work` on a thread while the block runs; wait for it after, and raise its error if the block did not
    raise one of its own."""
    failed: list[BaseException] = []

    def target() -> None:
        try:
            work()
        except BaseException as exc:  # handed to the waiting thread
            failed.append(exc)

    thread = threading.Thread(target=target, name="evalkit-compact")
    thread.start()
    try:
        yield
    finally:
        thread.join()
    if failed:
        raise failed[0]


def local_run_dir(where: str | Path) -> Path:
    """The folder of a run given as a folder or a store URL (``s3://...``: its local copy, brought up to date)."""
    from evalkit._store import is_url, parse_url, pull_run

    return pull_run(parse_url(where)) if is_url(where) else Path(where)


def read_run(path: str | Path) -> tuple[Manifest, pl.DataFrame]:
    """A finished run's manifest and check-level rows (from parquet, or the journal if parquet is missing).

    Parameters
    ----------
    path:
        The run directory (``runs/<run-id>/``), or its store URL.

    Returns
    -------
    The manifest and the check-level frame, whose columns are ``CHECK_ROW_SCHEMA``'s.
    """
    run = RunDir(local_run_dir(path))
    manifest = run.read_manifest()
    if run.parquet_path.exists():
        return manifest, _conformed(pl.read_parquet(run.parquet_path), run.parquet_path)
    return manifest, check_rows(run.read_journal(manifest.run_id))


def _conformed(frame: pl.DataFrame, where: Path) -> pl.DataFrame:
    """The frame in the schema's column order and types; a file missing a column is not a results file, unless
    the columns it misses are those a newer schema added (it is then upgraded)."""
    if frame.schema == CHECK_ROW_SCHEMA:
        return frame
    missing = [c for c in CHECK_ROW_SCHEMA if c not in frame.columns]
    if missing and set(missing) <= ADDED_COLUMNS:
        frame = upgrade_frame(frame)
        missing = []
    if missing:
        raise EvalkitError(
            f"{where}: not an evalkit results file (missing columns {missing}); "
            "delete it and the run's journal (results.jsonl) will be read instead"
        )
    return frame.select([pl.col(c).cast(t) for c, t in CHECK_ROW_SCHEMA.items()])
