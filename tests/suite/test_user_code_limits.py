"""User code cannot end or hang evalkit: checks.py at import, and its checks during a run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.suite import validate_suite

ROOT = Path(__file__).resolve().parents[2]


def user_suite(tmp_path: Path, checks_py: str, *, timeout: float | None = 0.5, cases: int = 1) -> Path:
    root = tmp_path / "s"
    root.mkdir()
    lines = [
        json.dumps({"id": f"c{i}", "input": "q", "checks": [{"kind": "user", "name": "ok"}]})
        for i in range(cases)
    ]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "checks.py").write_text(checks_py, encoding="utf-8")
    (root / "baseline.py").write_text("def predict(input):\n    return 'out'\n", encoding="utf-8")
    toml = 'name = "s"\n' + (f"check_timeout_s = {timeout}\n" if timeout is not None else "")
    (root / "suite.toml").write_text(toml, encoding="utf-8")
    return root


def evalkit(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process: what a user's os._exit or loop would end or hang is that process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "evalkit.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


OK_CHECK = "\n\n@evalkit.check('ok')\ndef ok(value, case):\n    return True\n"


def test_os_exit_at_import_is_a_located_problem_not_a_silent_exit_0(tmp_path: Path) -> None:
    root = user_suite(tmp_path, "import os\nimport evalkit\nos._exit(0)" + OK_CHECK)
    done = evalkit("validate", str(root))
    assert done.returncode == 2, done
    shown = done.stdout + done.stderr
    assert f"{root / 'checks.py'}" in shown
    assert "checks.py: importing it ended the process with os._exit(0)" in shown


def test_a_loop_at_import_is_a_located_problem_within_the_limit(tmp_path: Path) -> None:
    root = user_suite(tmp_path, "import evalkit\nwhile True:\n    pass" + OK_CHECK, timeout=0.25)
    start = time.monotonic()
    done = evalkit("validate", str(root))
    assert done.returncode == 2, done
    assert time.monotonic() - start < 30
    assert "checks.py: did not finish importing within 1.5 s" in done.stdout + done.stderr


def test_sys_exit_at_import_stays_contained(tmp_path: Path) -> None:
    root = user_suite(tmp_path, "import sys\nsys.exit(4)\n")
    _, problems = validate_suite(root)
    messages = [p.message for p in problems]
    assert "checks.py: failed to import: SystemExit: 4" in messages
    assert main(["validate", str(root)]) == 2


def test_an_import_error_is_reported_once_with_its_message(tmp_path: Path) -> None:
    root = user_suite(tmp_path, "import evalkit\nraise ImportError('no module named helpers')\n")
    _, problems = validate_suite(root)
    (imported,) = [p for p in problems if p.field == "(import)"]
    assert imported.message == "checks.py: failed to import: ImportError: no module named helpers"


def test_what_checks_py_prints_at_import_shows_once(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = user_suite(tmp_path, "import evalkit\nprint('importing checks')" + OK_CHECK)
    assert main(["validate", str(root)]) == 0
    assert capfd.readouterr().out.count("importing checks") == 1


@pytest.mark.parametrize(("timeout", "imports"), [(0.5, 2), (0, 1)])
def test_zero_imports_only_in_this_process(tmp_path: Path, timeout: float, imports: int) -> None:
    log = tmp_path / "imported.txt"
    code = (
        f"import os, evalkit\nwith open({str(log)!r}, 'a') as f:\n    f.write(f'{{os.getpid()}}\\n')"
        + OK_CHECK
    )
    root = user_suite(tmp_path, code, timeout=timeout)
    suite, problems = validate_suite(root)
    assert not problems and suite is not None and suite.user is not None
    pids = log.read_text(encoding="utf-8").split()
    assert len(pids) == imports and pids[-1] == str(os.getpid())  # a child first, then here


def test_the_limit_is_a_suite_setting(tmp_path: Path) -> None:
    root = user_suite(tmp_path, "import evalkit" + OK_CHECK, timeout=None)
    suite, _ = validate_suite(root)
    assert suite is not None and suite.config.check_timeout_s == 5.0
    (root / "suite.toml").write_text('name = "s"\ncheck_timeout_s = -1\n', encoding="utf-8")
    _, problems = validate_suite(root)
    assert [(p.line, p.field) for p in problems] == [(2, "check_timeout_s")]


def test_run_goes_on_past_a_looping_user_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checks = (
        "import evalkit\n\n"
        "@evalkit.check('ok')\n"
        "def ok(value, case):\n"
        "    if case.id == 'c1':\n"
        "        while True:\n"
        "            pass\n"
        "    return True\n"
    )
    root = user_suite(tmp_path, checks, timeout=0.5, cases=3)
    runs = tmp_path / "runs"
    main(["run", str(root), "--system", "baseline", "--judge", "off", "--runs-dir", str(runs), "-q"])
    shown = capsys.readouterr()
    assert "errors 1" in shown.out + shown.err
    results = next(runs.glob("*/results.jsonl")).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in results.splitlines() if line.strip()]
    assert {r["case_id"]: r["status"] for r in rows} == {"c0": "pass", "c1": "error", "c2": "pass"}
    (looped,) = [r for r in rows if r["case_id"] == "c1"]
    assert looped["checks"][0]["error"].startswith("user check 'ok' timed out after 0.5 s")


def test_worker_processes_of_a_run_grade_user_checks_too(tmp_path: Path) -> None:
    # a run's case workers are daemonic processes: the check workers are forked without multiprocessing
    checks = "import os, evalkit\n\n@evalkit.check('ok')\ndef ok(value, case):\n    return True, str(os.getpid())\n"
    root = user_suite(tmp_path, checks, timeout=2, cases=8)
    runs = tmp_path / "runs"
    args = ["run", str(root), "--system", "baseline", "--judge", "off", "--runs-dir", str(runs), "-q"]
    assert main([*args, "--processes", "2", "--concurrency", "4"]) == 0
    results = next(runs.glob("*/results.jsonl")).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in results.splitlines() if line.strip()]
    assert len(rows) == 8 and {r["status"] for r in rows} == {"pass"}
    graded_in = {r["checks"][0]["detail"] for r in rows}
    assert str(os.getpid()) not in graded_in  # in worker processes, not in this one
