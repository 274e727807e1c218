"""Loading systems: module:function from the current directory, file systems and their neighbours, located errors
for bad specs and bad functions, suite-relative default_system, and what a resume needs to find the system again."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit._runner import Runner, RunOptions
from evalkit._systems import PythonSystem, load_system
from evalkit.errors import EvalkitError, SystemLoadError
from evalkit.suite import Suite, load_suite

EVALKIT = Path(sys.executable).parent / "evalkit"  # the console script, which does not put "." on sys.path

GOOD = "def predict(input):\n    return {'label': 'odd' if input['n'] % 2 else 'even'}\n"
FAILING = "def predict(input):\n    raise ValueError('not yet')\n"


def make_suite(root: Path, toml: str = "") -> Path:
    root.mkdir(parents=True)
    rows = [
        {"id": f"c{i}", "input": {"n": i}, "checks": [{"kind": "exact", "field": "label", "expected": label}]}
        for i, label in enumerate(["even", "odd", "even"])
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "suite.toml").write_text(f'name = "parity"\n{toml}')
    return root


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """tmp_path as the current directory, not on sys.path (as under the console script); new modules forgotten."""
    monkeypatch.chdir(tmp_path)
    here = {"", ".", str(tmp_path), str(tmp_path.resolve())}
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in here])
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]


@pytest.fixture
def suite(workdir: Path) -> Suite:
    return load_suite(make_suite(workdir / "suite"))


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EVALKIT), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


# 1. module:function from the current directory ---------------------------------------------------------------------


def test_a_module_in_the_current_directory_is_found_and_sys_path_is_left_as_it_was(
    workdir: Path, suite: Suite
) -> None:
    name = unique("mysys")
    (workdir / f"{name}.py").write_text(GOOD)
    path_before = list(sys.path)
    system = load_system(f"{name}:predict", suite)
    assert isinstance(system, PythonSystem) and system.fn({"n": 3}) == {"label": "odd"}
    assert sys.path == path_before


def test_a_module_not_found_says_where_it_was_looked_for(suite: Suite, workdir: Path) -> None:
    with pytest.raises(SystemLoadError, match="cannot import module 'nowhere_xyz'") as raised:
        load_system("nowhere_xyz:predict", suite)
    assert str(workdir) in str(raised.value) and "PYTHONPATH" in str(raised.value)


def test_the_console_script_finds_a_module_in_the_current_directory(tmp_path: Path) -> None:
    make_suite(tmp_path / "suite")
    (tmp_path / "mysys.py").write_text(GOOD)
    done = run_cli("run", "suite", "--system", "mysys:predict", "--cache", "off", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "No module named" not in done.stderr


# 2. bad specs and modules that fail to import are located SystemLoadErrors ----------------------------------------


@pytest.mark.parametrize(
    ("source", "needles"),
    [
        ("def predict(:\n    pass\n", ["failed to import: SyntaxError at ", ".py:1: "]),
        ("x = 1\nraise RuntimeError('no config')\n", ["RuntimeError: no config", ".py:2)"]),
        ("import sys\nsys.exit(3)\n", ["SystemExit: 3"]),
        (
            "import missing_dependency_xyz\n",
            ["ModuleNotFoundError: No module named 'missing_dependency_xyz'"],
        ),
    ],
)
@pytest.mark.parametrize("as_file", [False, True])
def test_a_system_that_raises_at_import_is_a_located_system_error(
    workdir: Path, suite: Suite, source: str, needles: list[str], as_file: bool
) -> None:
    name = unique("broken")
    (workdir / f"{name}.py").write_text(source)
    spec = f"{name}.py:predict" if as_file else f"{name}:predict"
    with pytest.raises(SystemLoadError) as raised:
        load_system(spec, suite)
    message = str(raised.value)
    assert f"system {spec!r}" in message and f"{name}.py" in message
    for needle in needles:
        assert needle in message
    assert not [m for m in sys.modules if name in m]  # nothing half-imported is left


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        (":predict", "names no module or file before the ':'"),
        ("sys_noarg.py:", "names no function after the ':'; write e.g. sys_noarg.py:predict"),
        ("json:", "names no function after the ':'"),
        ("pipeline.py", "name the function too, e.g. pipeline.py:predict"),
        (".relative:predict", "relative module name"),
    ],
)
def test_malformed_specs_say_what_to_write(suite: Suite, spec: str, needle: str) -> None:
    with pytest.raises(SystemLoadError) as raised:
        load_system(spec, suite)
    assert needle in str(raised.value)


def test_a_bad_system_on_the_command_line_exits_2_and_writes_no_run(tmp_path: Path) -> None:
    make_suite(tmp_path / "suite")
    (tmp_path / "badsyn.py").write_text("def predict(:\n")
    for spec in ("badsyn:predict", ":predict", "badsyn.py:"):
        done = run_cli("run", "suite", "--system", spec, "--runs-dir", "runs", cwd=tmp_path)
        assert done.returncode == 2, (spec, done.stderr)
        assert done.stderr.startswith("evalkit: error: system ") and "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()


# 3. suite.toml's default_system resolves against the suite's folder ----------------------------------------------


def test_default_system_file_resolves_against_the_suite_folder_not_the_current_directory(
    workdir: Path,
) -> None:
    root = make_suite(workdir / "suite", 'default_system = "pipeline.py:predict"\n')
    (root / "pipeline.py").write_text(GOOD)
    (workdir / "pipeline.py").write_text("def predict(input):\n    return 'the wrong one'\n")
    suite = load_suite(root)
    for spec in (None, "pipeline.py:predict"):
        system = load_system(spec, suite)
        assert isinstance(system, PythonSystem) and system.origin == str((root / "pipeline.py").resolve())
        assert system.fn({"n": 1}) == {"label": "odd"}


def test_a_missing_default_system_file_names_where_it_was_looked_for(workdir: Path) -> None:
    root = make_suite(workdir / "suite", 'default_system = "pipeline.py:predict"\n')
    (workdir / "pipeline.py").write_text(GOOD)  # not the suite's: never used for it
    with pytest.raises(SystemLoadError, match="not found") as raised:
        load_system(None, load_suite(root))
    assert str(root / "pipeline.py") in str(raised.value)


def test_a_file_on_the_command_line_resolves_against_the_current_directory_first(workdir: Path) -> None:
    root = make_suite(workdir / "suite")
    (root / "mine.py").write_text("def predict(input):\n    return 'suite'\n")
    (workdir / "mine.py").write_text("def predict(input):\n    return 'cwd'\n")
    assert load_system("mine.py:predict", load_suite(root)).fn(None) == "cwd"  # type: ignore[union-attr]
    (workdir / "mine.py").unlink()
    assert load_system("mine.py:predict", load_suite(root)).fn(None) == "suite"  # type: ignore[union-attr]


# 4. the function's signature is checked when it is loaded -------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("def predict():\n    return 1\n", "predict() cannot be called with one argument"),
        ("def predict(a, b):\n    return 1\n", "predict(a, b) cannot be called with one argument"),
        ("def predict(*, input):\n    return 1\n", "cannot be called with one argument"),
        ("async def predict(input):\n    return 1\n", "is `async def`"),
        ("async def predict(input):\n    yield 1\n", "is `async def`"),
        (
            "class P:\n    async def __call__(self, input):\n        return 1\npredict = P()\n",
            "is `async def`",
        ),
        ("predict = 42\n", "is a int, not a function"),
    ],
)
def test_a_function_that_cannot_take_one_input_is_rejected_at_load(
    workdir: Path, suite: Suite, source: str, needle: str
) -> None:
    (workdir / "sigs.py").write_text(source)
    with pytest.raises(SystemLoadError) as raised:
        load_system("sigs.py:predict", suite)
    assert needle in str(raised.value) and "define `def predict(input): ...`" in str(raised.value)


@pytest.mark.parametrize(
    "source",
    [
        "def predict(x, extra=1):\n    return x\n",
        "def predict(*args, **kwargs):\n    return args[0]\n",
        "def predict(x, /, *, flag=False):\n    return x\n",
        "class P:\n    def __call__(self, x):\n        return x\npredict = P()\n",
    ],
)
def test_one_positional_argument_with_optional_others_is_accepted(
    workdir: Path, suite: Suite, source: str
) -> None:
    (workdir / "sigs.py").write_text(source)
    assert load_system("sigs.py:predict", suite).fn("x") == "x"  # type: ignore[union-attr]


# 5. what a resume needs: a module's code hash, a file's absolute path --------------------------------------------


def options(tmp_path: Path) -> RunOptions:
    return RunOptions(out_root=tmp_path / "runs", cache_dir=tmp_path / "cache", progress=False)


def test_a_module_system_has_a_code_hash_and_a_resume_refuses_changed_code(
    workdir: Path, suite: Suite
) -> None:
    name = unique("modsys")
    source = workdir / f"{name}.py"
    source.write_text(FAILING)
    system = load_system(f"{name}:predict", suite)
    assert isinstance(system, PythonSystem) and system.code_hash
    assert system.origin == str(source.resolve())
    first = Runner(suite, system, options(workdir)).run()
    source.write_text(GOOD)
    del sys.modules[name]  # a resume is a new process: it imports the module afresh
    changed = load_system(f"{name}:predict", suite)
    assert changed.code_hash != system.code_hash  # type: ignore[union-attr]
    with pytest.raises(EvalkitError, match="code_hash has changed"):
        Runner(suite, changed, options(workdir)).run(resume=first.run_dir)


def test_a_builtin_module_system_has_no_code_hash(suite: Suite) -> None:
    system = load_system("math:fabs", suite)
    assert isinstance(system, PythonSystem) and system.code_hash is None and system.origin == "math:fabs"


def test_a_file_system_run_resumes_from_another_directory(tmp_path: Path) -> None:
    make_suite(tmp_path / "work" / "suite")
    (tmp_path / "work" / "slow.py").write_text(FAILING)
    other = tmp_path / "elsewhere"
    other.mkdir()
    args = ("--runs-dir", str(tmp_path / "runs"), "--cache", "off", "--quiet")
    first = run_cli("run", "suite", "--system", "slow.py:predict", *args, cwd=tmp_path / "work")
    assert first.returncode == 1, first.stderr  # every case raised: nothing scored
    (run_dir,) = (tmp_path / "runs").iterdir()
    recorded = json.loads((run_dir / "manifest.json").read_text())["system"]
    assert recorded["origin"] == str((tmp_path / "work" / "slow.py").resolve())
    assert recorded["name"] == f"{recorded['origin']}:predict"
    (tmp_path / "work" / "slow.py").write_text(FAILING + "# a comment\n")
    again = run_cli("run", "--resume", str(run_dir), "--quiet", cwd=other)
    assert again.returncode == 2 and "code_hash has changed" in again.stderr  # found, and compared
    (tmp_path / "work" / "slow.py").write_text(FAILING)
    again = run_cli("run", "--resume", str(run_dir), "--quiet", cwd=other)
    assert again.returncode == 1, again.stderr  # found and run again (and still raising)
    assert "not found" not in again.stderr and "every check errored" in again.stdout


# 6. a file system can import a module next to it -----------------------------------------------------------------


def test_a_baseline_imports_a_helper_next_to_it_and_sys_path_is_restored(workdir: Path) -> None:
    root = make_suite(workdir / "suite")
    helper = unique("helpers")
    (root / f"{helper}.py").write_text("LABEL = 'odd'\n")
    (root / "baseline.py").write_text(
        f"from {helper} import LABEL\n\ndef predict(input):\n    return {{'label': LABEL}}\n"
    )
    path_before = list(sys.path)
    system = load_system("baseline", load_suite(root))
    assert system.fn({"n": 1}) == {"label": "odd"}  # type: ignore[union-attr]
    assert sys.path == path_before
    assert helper in sys.modules  # cached under its own name, as the docstring says
