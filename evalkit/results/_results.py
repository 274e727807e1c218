"""The results schema and the run directory: manifest.json, results.jsonl (the journal) and results.parquet.

One journal line per (case, repeat) carries the case-level facts and a list of check results. The parquet file
and :func:`check_rows` flatten that to one row per (case, repeat, check): the frame every statistic works on.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, Field

from evalkit._fs import atomic_write_bytes, atomic_write_text, atomic_writer
from evalkit._version import __version__
from evalkit.errors import EvalkitError

RESULTS_SCHEMA_VERSION = 1
CaseStatus = Literal["pass", "fail", "error", "not_scored"]
CheckStatus = Literal["pass", "fail", "skipped", "error"]


class CheckResult(BaseModel):
    """One check's verdict on one output."""

    index: int
    kind: str
    name: str
    field: str | None = None
    tier: str
    status: CheckStatus
    passed: bool | None = None
    score: float | None = None
    detail: str = ""
    skipped_reason: str | None = None
    error: str | None = None
    judge_model: str | None = None
    judge_model_version: str | None = None
    judge_reasoning: str | None = None
    judge_criteria: list[dict[str, Any]] | None = None
    judge_input_tokens: int | None = None
    judge_output_tokens: int | None = None
    judge_cost_usd: float | None = None
    judge_latency_s: float | None = None
    judge_cache_hit: bool | None = None


class CaseResult(BaseModel):
    """One (case, repeat): the output, what it cost, and every check's verdict."""

    run_id: str
    suite: str
    suite_version: str
    case_id: str
    slice: str
    split: str = "dev"
    repeat: int = 0
    status: CaseStatus
    output: Any = None
    output_hash: str | None = None
    error: str | None = None
    system: str
    system_model: str | None = None
    system_model_version: str | None = None
    request_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    cache_hit: bool = False
    checks: list[CheckResult] = Field(default_factory=list)
    finished_at: str = Field(default_factory=lambda: now_iso())

    @property
    def key(self) -> tuple[str, int]:
        return (self.case_id, self.repeat)


NOT_JUDGED_PREFIX = "not judged"


def is_not_judged(status: str, skipped_reason: str | None) -> bool:
    """A check that should have run but could not (no judge available): its verdict is unknown, not skipped."""
    return status == "skipped" and (skipped_reason or "").startswith(NOT_JUDGED_PREFIX)


def case_status(checks: Iterable[CheckResult]) -> CaseStatus:
    """error if any check errored; else fail if any failed; else not scored if a judge check could not run;
    else pass if any passed."""
    checks = list(checks)
    statuses = [c.status for c in checks]
    if "error" in statuses:
        return "error"
    if "fail" in statuses:
        return "fail"
    if any(is_not_judged(c.status, c.skipped_reason) for c in checks):
        return "not_scored"
    if "pass" in statuses:
        return "pass"
    return "not_scored"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


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
            return Manifest.model_validate_json(self.manifest_path.read_text(encoding="utf-8"))
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
        atomic_write_bytes(self.parquet_path, _parquet_bytes(check_rows(ordered)))

    def finish(self, journal: Journal | None = None, chunk: int = 2000, run_id: str | None = None) -> int:
        """Compact the journal to its last line per (case, repeat) and write results.parquet, streaming.

        Works on the journal's text rather than result models, so a 10,000-case run never holds them all. Given
        the session's `journal`, its lines are not parsed again: their keys and rows are already known. Other
        lines are kept only if they are results (as `read_journal` reads them) and, given `run_id`, of this
        run: a line that is not would otherwise replace a case's real result."""
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
            rows = list(_rows([json.loads(latest[key])]))
            spans[key] = (offset, len(rows))
            offset += len(rows)
            pending.extend(rows)
            if len(pending) >= chunk:
                frames.append(pl.DataFrame(pending, schema=CHECK_ROW_SCHEMA))
                pending = []
        if pending:
            frames.append(pl.DataFrame(pending, schema=CHECK_ROW_SCHEMA))
        if own is not None:
            for key, (start, count) in zip(own.keys, own.spans(), strict=True):
                spans[key] = (offset + start, count)
            frames.append(own.rows())
        frame = pl.concat(frames) if frames else pl.DataFrame(schema=CHECK_ROW_SCHEMA)
        if own is not None:  # the session's rows are in the order its cases finished
            order = [row for key in keys for row in range(spans[key][0], spans[key][0] + spans[key][1])]
            frame = frame[pl.Series(order, dtype=pl.UInt32)]
        atomic_write_bytes(self.parquet_path, _parquet_bytes(frame))


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


class Journal:
    """Append-only writer: one flushed line per finished (case, repeat), so a crash loses nothing finished.

    It also keeps the keys it wrote and their check rows (in compact frames), so that finishing the run need
    not read back and parse its own lines: that work is done while the run waits on the network."""

    def __init__(self, path: Path, chunk: int = 500) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = path.open("ab")
        self.start = self._fh.tell()
        """The journal's size when this session began: later lines are this session's."""
        self.keys: list[tuple[str, int]] = []
        self._chunk = chunk  # rows per frame: small, so that little is left to convert when the run ends
        self._pending: list[dict[str, Any]] = []
        self._frames: list[pl.DataFrame] = []
        self._counts: list[int] = []

    def append(self, result: CaseResult) -> None:
        self._fh.write(result.model_dump_json().encode("utf-8") + b"\n")
        self._fh.flush()
        self.keys.append(result.key)
        rows = list(_rows([result]))
        self._counts.append(len(rows))
        self._pending.extend(rows)
        if len(self._pending) >= self._chunk:
            self._frames.append(pl.DataFrame(self._pending, schema=CHECK_ROW_SCHEMA))
            self._pending = []

    def rows(self) -> pl.DataFrame:
        """The check rows of every line this session wrote, in the order written."""
        if self._pending:
            self._frames.append(pl.DataFrame(self._pending, schema=CHECK_ROW_SCHEMA))
            self._pending = []
        if not self._frames:
            return pl.DataFrame(schema=CHECK_ROW_SCHEMA)
        self._frames = [pl.concat(self._frames)]
        return self._frames[0]

    def spans(self) -> Iterator[tuple[int, int]]:
        """(first row, number of rows) in `rows()` of each line written, in the order written."""
        start = 0
        for count in self._counts:
            yield start, count
            start += count

    def wrote(self, lines: list[bytes]) -> bool:
        """Whether `lines`, read back from the journal past `start`, are exactly the lines this session wrote."""
        return len(lines) == len(self.keys) == len(set(self.keys))

    def close(self) -> None:
        self._fh.close()


def _parquet_bytes(frame: pl.DataFrame) -> bytes:
    import io

    buf = io.BytesIO()
    frame.write_parquet(buf)
    return buf.getvalue()


CHECK_ROW_SCHEMA: dict[str, Any] = {
    "run_id": pl.String,
    "suite": pl.String,
    "suite_version": pl.String,
    "case_id": pl.String,
    "slice": pl.String,
    "split": pl.String,
    "repeat": pl.Int64,
    "case_status": pl.String,
    "system": pl.String,
    "system_model": pl.String,
    "system_model_version": pl.String,
    "output": pl.String,
    "output_hash": pl.String,
    "case_error": pl.String,
    "input_tokens": pl.Int64,
    "output_tokens": pl.Int64,
    "cost_usd": pl.Float64,
    "latency_s": pl.Float64,
    "cache_hit": pl.Boolean,
    "check_index": pl.Int64,
    "check_kind": pl.String,
    "check_name": pl.String,
    "check_field": pl.String,
    "tier": pl.String,
    "status": pl.String,
    "passed": pl.Boolean,
    "score": pl.Float64,
    "detail": pl.String,
    "skipped_reason": pl.String,
    "error": pl.String,
    "judge_model": pl.String,
    "judge_model_version": pl.String,
    "judge_reasoning": pl.String,
    "judge_input_tokens": pl.Int64,
    "judge_output_tokens": pl.Int64,
    "judge_cost_usd": pl.Float64,
    "judge_latency_s": pl.Float64,
    "judge_cache_hit": pl.Boolean,
}


_CASE_COLUMNS = (
    "run_id",
    "suite",
    "suite_version",
    "case_id",
    "slice",
    "split",
    "repeat",
    "system",
    "system_model",
    "system_model_version",
    "output_hash",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "latency_s",
    "cache_hit",
)
_CHECK_COLUMNS = {
    "index": "check_index",
    "kind": "check_kind",
    "name": "check_name",
    "field": "check_field",
    "tier": "tier",
    "status": "status",
    "passed": "passed",
    "score": "score",
    "detail": "detail",
    "skipped_reason": "skipped_reason",
    "error": "error",
    "judge_model": "judge_model",
    "judge_model_version": "judge_model_version",
    "judge_reasoning": "judge_reasoning",
    "judge_input_tokens": "judge_input_tokens",
    "judge_output_tokens": "judge_output_tokens",
    "judge_cost_usd": "judge_cost_usd",
    "judge_latency_s": "judge_latency_s",
    "judge_cache_hit": "judge_cache_hit",
}


def _rows(results: Iterable[CaseResult | dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Check-level rows from case results, given as models or as their decoded journal lines."""
    for item in results:
        r = item.model_dump(mode="json") if isinstance(item, CaseResult) else item
        base = {col: r.get(col) for col in _CASE_COLUMNS}
        output = r.get("output")
        base["output"] = json.dumps(output, ensure_ascii=False) if output is not None else None
        base["case_status"] = r.get("status")
        base["case_error"] = r.get("error")
        base["cache_hit"] = bool(r.get("cache_hit"))
        for c in r.get("checks") or []:
            yield base | {col: c.get(key) for key, col in _CHECK_COLUMNS.items()}


def check_rows(results: Iterable[CaseResult]) -> pl.DataFrame:
    """Flatten case results to the check-level frame (one row per case x repeat x check)."""
    return pl.DataFrame(list(_rows(results)), schema=CHECK_ROW_SCHEMA)


def load_run(path: str | Path) -> tuple[Manifest, pl.DataFrame]:
    """A finished run's manifest and check-level rows (from parquet, or the journal if parquet is missing)."""
    run = RunDir(Path(path))
    manifest = run.read_manifest()
    if run.parquet_path.exists():
        return manifest, pl.read_parquet(run.parquet_path)
    return manifest, check_rows(run.read_journal(manifest.run_id))
