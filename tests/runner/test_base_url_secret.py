"""A password in ANTHROPIC_BASE_URL never reaches the terminal, the run directory or the cache."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

SECRET = "s3cret-pass-0915"


def test_a_password_in_the_base_url_is_not_printed_when_it_cannot_connect(tmp_path: Path) -> None:
    suite = tmp_path / "s"
    suite.mkdir()
    (suite / "suite.toml").write_text('name = "s"\n[model]\nname = "claude-sonnet-4-6"\n')
    (suite / "prompt.md").write_text("Answer with the word yes.\n")
    (suite / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": f"c{i}", "input": "q", "expected": "yes", "grader": "exact"}) + "\n"
            for i in range(12)
        )
    )
    with socket.socket() as probe:  # a port with nothing listening on it
        probe.bind(("127.0.0.1", 0))
        url = f"http://user:{SECRET}@127.0.0.1:{probe.getsockname()[1]}"
    env = dict(os.environ, ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-ant-test-0000")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalkit.cli",
            "run",
            str(suite),
            "--system",
            "claude",
            "-q",
            "--max-retries",
            "0",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "could not connect" in proc.stderr
    assert SECRET not in proc.stderr + proc.stdout
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and all(SECRET not in p.read_text(errors="replace") for p in written)
