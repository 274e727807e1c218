"""`evalkit run` as a program ends without a full teardown: its run directory complete, its output all out
through a pipe, its exit code kept; and a warm rerun loads no SDK and forks no workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl

from evalkit._results import read_run

ROOT = Path(__file__).resolve().parents[2]


def make_suite(root: Path, n: int) -> Path:
    root.mkdir(parents=True)
    rows = [
        {"id": f"c{i:04d}", "input": f"n {i}", "checks": [{"kind": "exact", "expected": "ok"}]}
        for i in range(n)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "suite.toml").write_text(
        'name = "fast"\n\n[model]\nname = "claude-haiku-4-5"\n', encoding="utf-8"
    )
    (root / "prompt.md").write_text("Answer ok.\n", encoding="utf-8")
    return root


def env_for(server: Any) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EVALKIT_CACHE_DIR", "EVALKIT_PRICES")}
    env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="k", PYTHONPATH=str(ROOT))
    return env


def evalkit(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # stdout and stderr are pipes: what a fast exit could lose is what sits in their buffers
    return subprocess.run(
        [sys.executable, "-m", "evalkit.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_the_program_exits_with_its_run_directory_complete_and_its_output_printed(
    tmp_path: Path, make_anthropic_server: Any
) -> None:
    n = 120
    suite = make_suite(tmp_path / "suite", n)
    server = make_anthropic_server(text="ok")
    out = tmp_path / "run"
    where = ["--cache-dir", str(tmp_path / "cache"), "--judge", "off", "--concurrency", "40"]
    proc = evalkit("run", str(suite), "--system", "claude", "--out", str(out), *where, env=env_for(server))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith(f"run saved to {out}")  # the summary, to its last line
    assert proc.stdout.endswith("\n\n")  # and the blank line printed after it
    assert "fast" in proc.stdout and "100.0%" in proc.stdout
    manifest, rows = read_run(out)
    assert manifest.status == "complete" and manifest.ended_at
    assert rows.select("case_id").n_unique() == n
    assert (out / "results.parquet").is_file()
    assert len((out / "results.jsonl").read_text(encoding="utf-8").splitlines()) == n
    assert pl.read_parquet(out / "results.parquet").height == rows.height


def test_the_exit_code_is_kept(tmp_path: Path, make_anthropic_server: Any) -> None:
    suite = make_suite(tmp_path / "suite", 3)
    server = make_anthropic_server(text="not ok")  # every check fails: a regression against no baseline
    where = ["--cache-dir", str(tmp_path / "cache"), "--runs-dir", str(tmp_path / "runs"), "--judge", "off"]
    proc = evalkit("run", str(suite), "--system", "claude", "--gate", *where, env=env_for(server))
    assert proc.returncode == 1, proc.stderr
    assert "gate: no" in proc.stdout  # no baseline.json: the gate fails, and says what to do
    bad = evalkit("run", str(tmp_path / "missing"), env=env_for(server))
    assert bad.returncode == 2
    assert bad.stderr.endswith("nothing was run. Fix them and run again.\n")  # all of it, to the last line


def test_a_warm_rerun_loads_no_sdk_and_forks_no_workers(tmp_path: Path, make_anthropic_server: Any) -> None:
    n = 80
    suite = make_suite(tmp_path / "suite", n)
    server = make_anthropic_server(text="ok")
    args = ["run", str(suite), "--system", "claude", "--cache-dir", str(tmp_path / "cache"), "-q"]
    args += ["--runs-dir", str(tmp_path / "runs"), "--judge", "off", "--concurrency", "40"]
    assert evalkit(*args, env=env_for(server)).returncode == 0
    assert len(server.requests_to("/v1/messages")) == n
    # main([...]) from a caller returns (never exits the process), so the child can report what it loaded
    code = (
        "import sys\n"
        "import evalkit._runner._runner as runner\n"
        "runner.CaseWorkers = None  # a fork would fail the run\n"
        "from evalkit.cli import main\n"
        f"code = main({args!r})\n"
        "print(code, 'anthropic' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env_for(server))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "0 False"
    assert len(server.requests_to("/v1/messages")) == n  # every answer came from the cache
