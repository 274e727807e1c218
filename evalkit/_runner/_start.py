"""The run directory and manifest a run starts from: a new one, or the one a resumed run left."""

from __future__ import annotations

import contextlib
import errno
import re
import secrets
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from evalkit._results import Manifest, RunDir, git_commit, relative_to_cwd
from evalkit._runner._context import RunContext
from evalkit._runner._resume_check import check_resumable
from evalkit.errors import EvalkitError


def new_run_id(suite: str) -> str:
    """`<UTC time>-<suite name as a safe folder name>-<4 hex digits>`: "team/triage v2" gives ...-team-triage-v2-..."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^\w.]+", "-", suite).strip("-.") or "suite"
    return f"{stamp}-{slug}-{secrets.token_hex(2)}"


@dataclass
class Start:
    run: RunDir
    manifest: Manifest
    done: set[tuple[str, int]]
    """The (case id, repeat) pairs with a result that is not an error."""
    before: Manifest | None = None
    """The manifest as a resumed run left it (None for a new run)."""

    @property
    def was_complete(self) -> bool:
        return self.before is not None and self.before.status == "complete"


def start_run(ctx: RunContext, resume: Path | None) -> Start:
    """The run to run: `resume`'s (refused if the setup changed since), or a new one in an empty folder."""
    if resume is not None:
        run = RunDir(resume)
        manifest = run.read_manifest()
        run.repair_journal()
        check_resumable(resume, manifest, ctx.suite, ctx.system.describe(), ctx.judge_config)
        done = {r.key for r in run.read_journal(manifest.run_id) if r.status != "error"}
        before = manifest.model_copy()
        manifest.status = "running"
        manifest.ended_at = None
        return Start(run, manifest, done, before)
    run_id = ctx.options.run_id or new_run_id(ctx.suite.name)
    path = ctx.options.run_dir or (ctx.options.out_root / run_id)
    if path.exists() and not path.is_dir():
        raise EvalkitError(f"{path} is a file, not a directory; choose another --out")
    if path.exists() and any(path.iterdir()):
        raise EvalkitError(f"{path} already holds files; choose an empty --out or use --resume {path}")
    manifest = Manifest(
        run_id=run_id,
        suite=ctx.suite.name,
        suite_version=ctx.suite.version,
        suite_path=str((ctx.suite.root or ctx.suite.cases_file).resolve()),
        suite_relpath=relative_to_cwd(ctx.suite.root or ctx.suite.cases_file),
        cases=len(ctx.suite.cases),
        repeats=ctx.options.repeats,
        system=ctx.system.describe(),
        judge=ctx.judge_config,
        cache={"mode": ctx.cache.mode.value, "directory": ctx.cache.location},
        concurrency=ctx.options.concurrency,
        batch=ctx.options.batch,
        git_commit=git_commit(),
        shard=list(ctx.options.shard) if ctx.options.shard else None,
    )
    return Start(RunDir(path), manifest, set())


def make_run_dir(run: RunDir) -> None:
    try:  # a folder that cannot be made fails here, before any call
        run.path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EvalkitError(
            f"{run.path}: cannot make the run directory ({exc.strerror}); choose another --out or --runs-dir"
        ) from None


def lock_run_dir(path: Path) -> IO[str] | None:
    """An open, exclusively locked file in the run directory: two processes never run the same run at once.

    Two resumes of one interrupted run would otherwise both run (and pay for) every case left. The lock goes
    with the process (and its forked workers), so a killed run leaves nothing to clean up."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): runs are not guarded
        return None
    lock = (path / ".lock").open("a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        lock.close()
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            # a file system without locks (NFS mounted nolock, some FUSE mounts): the run goes on unguarded
            warnings.warn(
                f"cannot lock {path} ({exc.strerror}); do not resume this run twice at once", stacklevel=3
            )
            return None
        raise EvalkitError(
            f"{path} is being run by another evalkit process right now; wait for it to finish (or stop it), "
            "then resume it if it did not finish"
        ) from None
    return lock


def discard(run: RunDir) -> bool:
    """Remove a new run's directory that holds no result; whether it is gone."""
    for path in (run.manifest_path, run.journal_path, run.path / ".lock"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    try:
        run.path.rmdir()
    except OSError:  # something else was put there: leave it
        return False
    return True


def mark_manifest(run: RunDir, manifest: Manifest) -> bool:
    """Write the manifest of a run that stopped; whether it was written.

    A full disk refuses the new file an atomic write needs, but not the manifest's own blocks: it is then
    rewritten in place (a longer status fits the space the file already has)."""
    try:
        run.write_manifest(manifest)
        return True
    except OSError:
        pass
    text = (manifest.model_dump_json(indent=2) + "\n").encode("utf-8")
    try:
        with run.manifest_path.open("r+b") as fh:
            fh.write(text)
            fh.truncate()
    except OSError:
        return False  # the journal still has what finished, and a resume reads it
    return True


def spent_before(run: RunDir, run_id: str) -> float:
    """What the calls journalled in `run` cost (a resumed run's earlier sessions), cache hits being free."""
    total = 0.0
    for result in run.read_journal(run_id):
        if not result.cache_hit and result.input_tokens is not None:
            total += result.cost_usd or 0.0
        total += sum(
            c.judge_cost_usd or 0.0 for c in result.checks if c.judge_model and not c.judge_cache_hit
        )
    return total
