"""Finding a system: from a spec (baseline, claude, module:function, file.py:function) or any Python object."""

from __future__ import annotations

import os
from pathlib import Path

from evalkit._systems._claude import ClaudeSystem
from evalkit._systems._python import (
    PythonSystem,
    file_hash,
    load_file_function,
    load_module_function,
    python_system,
)
from evalkit.errors import SystemLoadError
from evalkit.suite import Suite

# the systems the runner knows how to run: it calls a PythonSystem's function and sends a ClaudeSystem's requests
RunnableSystem = PythonSystem | ClaudeSystem


def load_system(spec: str | None, suite: Suite) -> RunnableSystem:
    """Resolve `baseline`, `claude`, `path/to/file.py:function` or `package.module:function`.

    None is the suite's default_system. A relative file path there (or a spec that is the same text) is resolved
    against the suite's folder, as suite.toml's other paths are; one given on the command line against the current
    directory first, then the suite's folder. A file system's name is its spec with the file's absolute path, so
    `evalkit run --resume` (which loads the manifest's name) finds it from any directory. A module is imported with
    the current directory first on sys.path. Anything wrong is a SystemLoadError naming the spec."""
    from_suite = spec is None or spec == suite.config.default_system
    spec = suite.config.default_system if spec is None else spec
    if spec == "baseline":
        path = suite.resolve(suite.config.baseline).resolve()
        if not path.exists():
            raise SystemLoadError(
                f"suite {suite.name} has no baseline ({path} not found); use --system claude or module:function"
            )
        return PythonSystem(
            "baseline", load_file_function(path, "predict", spec), str(path), file_hash(path), free=True
        )
    if spec == "claude":
        path = suite.resolve(suite.config.prompt)
        if not path.exists():
            raise SystemLoadError(
                f"suite {suite.name} has no prompt ({path} not found); write the system prompt there"
            )
        prompt = path.read_text(encoding="utf-8")
        if not prompt.strip():
            raise SystemLoadError(
                f"suite {suite.name}'s prompt {path} is empty; write the system prompt there"
            )
        if suite.output_schema is not None:
            from evalkit.suite import UNSENDABLE_SCHEMA_HINT, unsendable_schema

            why = unsendable_schema(suite.output_schema)
            if why is not None:
                raise SystemLoadError(
                    f"suite {suite.name}: its output schema cannot be sent as structured output: {why} "
                    f"({UNSENDABLE_SCHEMA_HINT})"
                )
        m = suite.config.model
        return ClaudeSystem(
            prompt=prompt,
            model=m.name,
            max_tokens=m.max_tokens,
            temperature=m.temperature,
            top_p=m.top_p,
            thinking_budget=m.thinking_budget,
            output_schema=suite.output_schema,
            prompt_path=str(path),
            tools=suite.tools,
            max_turns=suite.config.max_turns,
        )
    return _load_function_spec(spec, suite, from_suite=from_suite)


def _load_function_spec(spec: str, suite: Suite | None, *, from_suite: bool) -> PythonSystem:
    """`module:function` or `path/file.py:function`; a relative file is also looked for in the suite's folder."""
    if ":" not in spec:
        more = f"; name the function too, e.g. {spec}:predict" if spec.endswith(".py") else ""
        raise SystemLoadError(
            f"unknown system {spec!r}: use baseline, claude, module:function or path/file.py:function{more}"
        )
    target, func = spec.rsplit(":", 1)
    if not target.strip():
        raise SystemLoadError(
            f"system {spec!r} names no module or file before the ':'; write module:function or path/file.py:function"
        )
    if not func.strip():
        raise SystemLoadError(f"system {spec!r} names no function after the ':'; write e.g. {target}:predict")
    if target.endswith(".py"):
        path = Path(target)
        # suite.toml's default_system: against the suite's folder, as its other paths; the command line's against
        # the current directory, then the suite's folder
        if suite is not None and not path.is_absolute() and (from_suite or not path.exists()):
            path = suite.resolve(target)
        where = (
            f" (default_system of suite {suite.name}, looked for at {path})" if suite and from_suite else ""
        )
        if not path.exists():
            raise SystemLoadError(f"system file {target!r} not found{where}")
        if not path.is_file():
            raise SystemLoadError(f"system file {target!r} is not a file{where}")
        path = path.resolve()
        fn = load_file_function(path, func, spec)
        return PythonSystem(f"{path}:{func}", fn, str(path), file_hash(path))
    return load_module_function(target, func, spec)


def as_system(obj: object, *, suite: Suite | None = None) -> RunnableSystem:
    """Anything that names or is a system, as one.

    Parameters
    ----------
    obj: a PythonSystem or ClaudeSystem (returned as it is); a plain callable taking the case input; a spec string
        (``module:function``, ``path/file.py:function``, or ``baseline`` / ``claude``, which need `suite`); a path
        to a Python file (a ``.py`` string or a ``Path``), whose ``predict`` function is the system.
    suite: the suite the system is for: where ``baseline``, ``claude`` and relative files are found.

    Returns
    -------
    The system. Anything that is none of these is a SystemLoadError saying what is accepted.
    """
    if isinstance(obj, PythonSystem | ClaudeSystem):
        return obj
    if isinstance(obj, os.PathLike) or (isinstance(obj, str) and obj.endswith(".py")):
        obj = f"{os.fspath(obj)}:predict"
    if isinstance(obj, str):
        if suite is not None:
            return load_system(obj, suite)
        if obj in ("baseline", "claude"):
            raise SystemLoadError(
                f"system {obj!r} is the suite's own: pass the suite too (as_system({obj!r}, suite=...))"
            )
        return _load_function_spec(obj, None, from_suite=False)
    if callable(obj):
        return python_system(obj)
    raise SystemLoadError(
        f"cannot make a system of {obj!r} ({type(obj).__name__}): give a function taking the case input, a PythonSystem or "
        "ClaudeSystem, or a spec (module:function, path/file.py:function, baseline, claude)"
    )
