"""Finishing a run: the compacted journal and results.parquet, from the session's own record or from the text."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from evalkit._results import CaseResult, CheckResult, Journal, RunDir, git_commit
from evalkit._results._rundir import _in_background


def result(case_id: str, repeat: int = 0, status: str = "pass", output: object = "even") -> CaseResult:
    checks = [
        CheckResult(index=i, kind=kind, name=kind, tier=tier, status=status, passed=status == "pass")
        for i, (kind, tier) in enumerate([("exact", "exact"), ("max_words", "code")])
    ]
    return CaseResult(
        run_id="r1",
        suite="s",
        suite_version="v1",
        case_id=case_id,
        slice="a" if case_id < "m" else "b",
        repeat=repeat,
        status="error" if status == "error" else "pass",  # type: ignore[arg-type]
        output=output,
        system="claude",
        cost_usd=0.001,
        checks=checks,
    )


def finished(run: RunDir, journal: Journal | None) -> tuple[bytes, pl.DataFrame]:
    run.finish(journal)
    return run.journal_path.read_bytes(), pl.read_parquet(run.parquet_path)


@pytest.mark.parametrize("resumed", [False, True])
def test_the_session_record_gives_the_same_files_as_parsing(tmp_path: Path, resumed: bool) -> None:
    a, b = RunDir(tmp_path / "a"), RunDir(tmp_path / "b")
    if resumed:  # an earlier session journalled some cases, one of them as an error that is run again
        earlier = Journal(a.journal_path)
        for r in [result("zeta"), result("beta", status="error"), result("alpha", 1, output={"k": [1, "é"]})]:
            earlier.append(r)
        earlier.close()
        shutil.copytree(a.path, b.path)
    journals = [Journal(a.journal_path), Journal(b.journal_path)]
    for r in [result("beta"), result("mu", 1), result("alpha"), result("mu", 0, output=None)]:
        for j in journals:
            j.append(r)
    for j in journals:
        j.close()
    text_a, rows_a = finished(a, journals[0])
    text_b, rows_b = finished(b, None)
    assert text_a == text_b
    assert_frame_equal(rows_a, rows_b)
    expected = sorted(
        [("alpha", 0), ("beta", 0), ("mu", 0), ("mu", 1)] + ([("alpha", 1), ("zeta", 0)] if resumed else [])
    )
    assert [r.key for r in a.read_journal()] == expected
    assert rows_a.select("case_id", "repeat").unique(maintain_order=True).rows() == expected
    assert rows_a.filter(pl.col("case_id") == "beta")["case_status"].to_list() == ["pass", "pass"]


def test_a_journal_changed_behind_the_session_is_read_from_its_text(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    journal = Journal(run.journal_path, chunk=3)  # small chunks: rows kept as several frames
    for name in ["c", "a", "b"]:
        journal.append(result(name))
    journal.close()
    with run.journal_path.open("ab") as fh:  # another writer's line the session knows nothing of
        fh.write(result("d").model_dump_json().encode() + b"\n")
    run.finish(journal)
    assert [r.key for r in run.read_journal()] == [("a", 0), ("b", 0), ("c", 0), ("d", 0)]
    assert pl.read_parquet(run.parquet_path).height == 8


def test_an_empty_session_writes_an_empty_frame(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    journal = Journal(run.journal_path)
    journal.close()
    assert run.finish(journal) == 0
    assert pl.read_parquet(run.parquet_path).height == 0


def test_finishing_waits_for_the_compacted_journal_and_raises_its_error() -> None:
    done: list[str] = []

    def fail() -> None:
        done.append("work")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"), _in_background(fail):
        pass
    assert done == ["work"]
    # an error of the block's own is the one raised, once the work has ended
    with pytest.raises(ValueError, match="parquet"), _in_background(lambda: done.append("again")):
        raise ValueError("parquet")
    assert done == ["work", "again"]


def _git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "HOME": str(cwd),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to build the repositories")
def test_git_commit_reads_what_git_rev_parse_says(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    assert git_commit(repo) is None  # an unborn branch
    (repo / "a.txt").write_text("a")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "one")
    (repo / "sub").mkdir()
    assert git_commit(repo / "sub") == _git(repo, "rev-parse", "HEAD")  # a loose ref, from a subfolder
    first = _git(repo, "rev-parse", "HEAD")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    _git(repo, "pack-refs", "--all")
    assert git_commit(repo) == _git(repo, "rev-parse", "HEAD") != first  # a packed ref
    _git(repo, "checkout", "-q", first)
    assert git_commit(repo) == first  # a detached HEAD
    _git(repo, "checkout", "-q", "main")
    _git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"), first)
    assert git_commit(tmp_path / "side") == first  # a linked worktree, its branch in the main repository
    outside = tmp_path / "outside"
    outside.mkdir()
    assert git_commit(outside) is None
