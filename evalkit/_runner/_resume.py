"""Resume rules: which options asked of a resumed run agree with the run they resume."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evalkit._results import Manifest


def same_system(given: str, recorded: str, suite_dir: Path | None = None) -> bool:
    """Whether a system spec names the recorded one.

    A file may be given by another path to it, from the current directory or (as a suite's default_system is)
    from the suite's folder.

    Parameters
    ----------
    given: the spec asked for now (``claude``, ``baseline``, ``module:function``, ``file.py:function``).
    recorded: the system name a run's manifest records.
    suite_dir: the suite's folder, against which a relative file is also tried.

    Returns
    -------
    True when both name the same system.
    """
    if given == recorded:
        return True
    if ".py:" in given and ".py:" in recorded:
        (file_a, func_a), (file_b, func_b) = (spec.rsplit(":", 1) for spec in (given, recorded))
        bases = [Path.cwd()] + ([suite_dir] if suite_dir is not None else [])
        return func_a == func_b and any((base / file_a).resolve() == Path(file_b).resolve() for base in bases)
    return False


def resume_conflicts(
    manifest: Manifest,
    run_dir: Path,
    *,
    suite_paths: Sequence[Path] = (),
    system: str | None = None,
    repeats: int | None = None,
    judge: str | None = None,
    out: Path | None = None,
) -> list[str]:
    """What a resume of the run at `run_dir` was asked for that differs from what the run was.

    Parameters
    ----------
    manifest: the run's manifest.
    run_dir: the run's directory.
    suite_paths: the suites named with the resume (none: the run's own).
    system, repeats, judge, out: the options given with the resume (None: not given).

    Returns
    -------
    One sentence per conflict, empty when the resume asks nothing the run was not.
    """
    conflicts = []
    located = manifest.suite_location()
    if suite_paths and [p.resolve() for p in suite_paths] != [Path(located).resolve()]:
        conflicts.append(f"the run is of the suite at {located}")
    name = manifest.system.get("name")
    suite_path = Path(located)
    suite_dir = suite_path if suite_path.suffix != ".jsonl" else suite_path.parent
    if system is not None and not same_system(system, str(name), suite_dir):
        conflicts.append(f"the run's system is {name}, not {system}")
    if repeats is not None and repeats != manifest.repeats:
        conflicts.append(f"the run has {manifest.repeats} repeat(s), not {repeats}")
    if judge is not None and judge != "auto" and (judge == "on") != bool(manifest.judge):
        conflicts.append(
            f"the run was {'judged' if manifest.judge else 'not judged'}; --judge {judge} would mix"
        )
    if out is not None and Path(out).resolve() != Path(run_dir).resolve():
        conflicts.append("a resumed run stays in its own directory (drop --out)")
    return conflicts
