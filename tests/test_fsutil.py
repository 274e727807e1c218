"""Atomic writes: the old file or the new one, never half of either, and no temp file left behind."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

from evalkit import _fs as fsutil


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("durable", [True, False])
def test_write_replaces_and_creates_the_folder(tmp_path: Path, durable: bool) -> None:
    target = tmp_path / "new" / "deeper" / "entry.json"
    fsutil.atomic_write_bytes(target, b"first", durable=durable)
    fsutil.atomic_write_bytes(target, b"second" * 100_000, durable=durable)
    assert target.read_bytes() == b"second" * 100_000
    assert temps(target.parent) == []


def test_a_stale_temp_file_with_the_same_name_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a dead writer whose pid came round again left its temp file: the next name is taken instead
    monkeypatch.setattr(fsutil, "_counter", itertools.count(7))
    stale = tmp_path / f".entry.json.{os.getpid()}-7.tmp"
    stale.write_bytes(b"stale")
    fsutil.atomic_write_bytes(tmp_path / "entry.json", b"fresh")
    assert (tmp_path / "entry.json").read_bytes() == b"fresh"
    assert temps(tmp_path) == [stale.name] and stale.read_bytes() == b"stale"


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_a_failed_write_keeps_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "entry.json"
    fsutil.atomic_write_bytes(target, b"old")

    def boom(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsutil.os, failing, boom)
    with pytest.raises(OSError, match="No space left"):
        fsutil.atomic_write_bytes(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old" and temps(tmp_path) == []


def test_writer_block_that_raises_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    with pytest.raises(RuntimeError), fsutil.atomic_writer(target) as fh:
        fh.write(b"half a report")
        raise RuntimeError("the renderer failed")
    assert not target.exists() and temps(tmp_path) == []
    with fsutil.atomic_writer(target) as fh:
        fh.write(b"whole")
    assert target.read_bytes() == b"whole"


def test_files_are_readable_by_others_under_the_usual_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        fsutil.atomic_write_bytes(tmp_path / "a.json", b"{}")
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o644


def test_temp_files_of_killed_writers_are_swept_by_the_next_write(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    target = tmp_path / "labels-ana.jsonl"
    code = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from evalkit._fs import atomic_writer\n"
        "with atomic_writer(Path(sys.argv[1])) as fh:\n"
        "    fh.write(b'half a save')\n"
        "    fh.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    for _ in range(3):  # three saves killed mid-write
        done = subprocess.run([sys.executable, "-c", code, str(target)], check=False)
        assert done.returncode == -signal.SIGKILL
    assert len(temps(tmp_path)) == 3 and not target.exists()
    live = tmp_path / f".{target.name}.{os.getppid()}-0.tmp"  # a writer still running: left alone
    other = tmp_path / ".other.jsonl.1-0.tmp"  # another file's: not this write's business
    live.write_bytes(b"")
    other.write_bytes(b"")
    fsutil.atomic_write_text(target, "saved\n")
    assert target.read_text() == "saved\n"
    assert temps(tmp_path) == sorted([live.name, other.name])
