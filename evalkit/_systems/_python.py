"""Python systems: a plain function `predict(input) -> output`, loaded from a file or a module, or given as is."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from evalkit._hashing import sha256_hex
from evalkit.errors import SystemLoadError


@dataclass
class PythonSystem:
    """A plain function `predict(input) -> output`: a baseline, or your own pipeline."""

    name: str
    fn: Callable[[Any], Any]
    origin: str
    code_hash: str | None = None
    free: bool = False  # a local baseline makes no paid calls: its cost is a known zero, not an unknown

    model: str | None = None

    @property
    def takes_tools(self) -> bool:
        """Whether the function takes a second parameter named ``tools``: it is then given the case's tool
        backend (``tools(name, arguments) -> result``), and its calls are recorded in the output."""
        try:
            return "tools" in list(inspect.signature(self.fn).parameters)[1:2]
        except (TypeError, ValueError):
            return False

    def describe(self) -> dict[str, Any]:
        return {"kind": "python", "name": self.name, "origin": self.origin, "code_hash": self.code_hash}


def python_system(fn: Callable[[Any], Any], *, name: str | None = None) -> PythonSystem:
    """A plain callable taking the case input as a system, checked to take one input.

    Parameters
    ----------
    fn: the function (or callable object) called with each case's input.
    name: what runs record it as (default: ``module:qualname``).

    Returns
    -------
    A PythonSystem whose code hash is that of the file `fn` is defined in, when it has one.
    """
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module_name = getattr(fn, "__module__", None) or type(fn).__module__
    label = name or f"{module_name}:{qualname}"
    checked = _checked_function(fn, label, qualname)
    source, code_hash = _module_source(inspect.getmodule(fn), fn)
    return PythonSystem(label, checked, source or label, code_hash)


def load_file_function(path: Path, func: str, spec: str | None = None) -> Callable[[Any], Any]:
    """`func` from the Python file at `path`, imported as a module of its own, checked to take one input.

    The file's folder is first on sys.path while the file is imported, so it can import a module next to it
    (`from helpers import LABEL`). Such a helper module is cached in sys.modules under its own name
    (`helpers`): another file imported later in the same process that imports a `helpers` of its own gets
    the first one."""
    label = spec or f"{path}:{func}"
    mod_name = f"evalkit_system_{path.stem}_{sha256_hex(str(path.resolve()))[:10]}"
    module_spec = importlib.util.spec_from_file_location(mod_name, path)
    if module_spec is None or module_spec.loader is None:
        raise SystemLoadError(
            f"system {label!r}: cannot import {path}; a system file must be Python source (.py)"
        )
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[mod_name] = module
    try:
        # the file's folder first on sys.path for the import only, so it can import a module next to it; a helper
        # imported this way stays cached in sys.modules under its own name after the folder is taken off
        with _first_on_path(path.parent):
            try:
                module_spec.loader.exec_module(module)
            except (Exception, SystemExit) as exc:
                raise SystemLoadError(f"system {label!r}: {_import_failure(str(path), exc)}") from exc
        fn = getattr(module, func, None)
        if fn is None:
            raise SystemLoadError(
                f"system {label!r}: {path} has no function {func!r}; define `def {func}(input): ...`"
            )
        return _checked_function(fn, label, func)
    except BaseException:
        sys.modules.pop(mod_name, None)  # nothing half-loaded is left behind
        raise


def load_module_function(target: str, func: str, spec: str) -> PythonSystem:
    """`func` from the module `target`, imported with the current directory first on sys.path."""
    if target.startswith("."):
        raise SystemLoadError(
            f"system {spec!r}: {target!r} is a relative module name; write it in full (package.module:{func}) "
            f"or give a file (path/to/file.py:{func})"
        )
    cwd = Path.cwd()
    importlib.invalidate_caches()  # a module written since the last import is found
    try:
        # as uvicorn and gunicorn do: the `evalkit` console script does not put the current directory on
        # sys.path (python -m does), so `mysys:predict` would not find ./mysys.py without this
        with _first_on_path(cwd):
            module = importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and (target == exc.name or target.startswith(exc.name + ".")):
            file_hint = "; a file system's path must end in .py" if "/" in target or "\\" in target else ""
            raise SystemLoadError(
                f"cannot import module {target!r} for system {spec!r}: {exc}. evalkit looks in the current "
                f"directory ({cwd}) and the installed packages: run it from the folder that holds the module, "
                f"add that folder to PYTHONPATH, or name the file instead (path/to/file.py:{func}){file_hint}"
            ) from exc
        raise SystemLoadError(f"system {spec!r}: {_import_failure(f'module {target!r}', exc)}") from exc
    except (Exception, SystemExit) as exc:
        raise SystemLoadError(f"system {spec!r}: {_import_failure(f'module {target!r}', exc)}") from exc
    fn = getattr(module, func, None)
    if fn is None:
        raise SystemLoadError(f"system {spec!r}: module {target!r} has no function {func!r}")
    fn = _checked_function(fn, spec, func)
    source, code_hash = _module_source(module, fn)
    return PythonSystem(spec, fn, source or spec, code_hash)


@contextlib.contextmanager
def _first_on_path(folder: Path) -> Iterator[None]:
    """`folder` first on sys.path while the block runs: put there (and taken off after) unless it is already."""
    first = sys.path[0] if sys.path else None
    if first is not None and Path(first or os.curdir).resolve() == folder.resolve():
        yield
        return
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def _import_failure(what: str, exc: BaseException) -> str:
    """Why importing `what` failed, located: a SyntaxError's file and line, else where the exception was raised."""
    if isinstance(exc, SyntaxError):
        where = f"{exc.filename}:{exc.lineno}" if exc.filename else f"line {exc.lineno}"
        return f"{what} failed to import: {type(exc).__name__} at {where}: {exc.msg}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen")]
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{what} failed to import: {type(exc).__name__}: {exc}{where}"


def _checked_function(fn: Any, spec: str, func: str) -> Callable[[Any], Any]:
    """`fn` if it can be called as `fn(input)` and returns its output (not a coroutine); else a SystemLoadError."""
    expected = f"define `def {func}(input): ...` (one positional argument, any others with defaults)"
    if not callable(fn):
        raise SystemLoadError(
            f"system {spec!r}: {func!r} is a {type(fn).__name__}, not a function; {expected}"
        )
    if (
        inspect.iscoroutinefunction(fn)
        or inspect.isasyncgenfunction(fn)
        or inspect.iscoroutinefunction(type(fn).__call__)  # an object with `async def __call__`
    ):
        raise SystemLoadError(
            f"system {spec!r}: {func} is `async def`, but evalkit calls a system synchronously; {expected} "
            "(it may run a coroutine itself with asyncio.run)"
        )
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have none: called as they are
        return cast("Callable[[Any], Any]", fn)
    try:
        if list(signature.parameters)[1:2] == ["tools"]:
            signature.bind(None, None)  # predict(input, tools): given the case's tool backend
        else:
            signature.bind(None)
    except TypeError:
        raise SystemLoadError(
            f"system {spec!r}: {func}{signature} cannot be called with one argument, the case's input; {expected}"
        ) from None
    return cast("Callable[[Any], Any]", fn)


def _module_source(module: Any, fn: Any) -> tuple[str | None, str | None]:
    """The module's source file, and a hash of it (and of the file `fn` is defined in, when that is another)."""
    files: list[Path] = []
    for obj in (module, inspect.getmodule(fn)):
        try:
            name = inspect.getsourcefile(obj) if obj is not None else None
        except TypeError:  # a builtin or extension module: no source to hash
            name = None
        if name and Path(name).is_file() and Path(name).resolve() not in files:
            files.append(Path(name).resolve())
    if not files:
        return None, None
    text = "\0".join(f.read_text(encoding="utf-8", errors="replace") for f in files)
    return str(files[0]), sha256_hex(text)[:12]


def file_hash(path: Path) -> str:
    return sha256_hex(path.read_text(encoding="utf-8"))[:12]
