"""Systems under test: a suite's Claude prompt, or a Python function (the suite's baseline or module:function)."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from evalkit._hashing import content_hash, sha256_hex
from evalkit.errors import EvalkitError
from evalkit.suite import Suite


class SystemError_(EvalkitError):
    """A system could not be found or loaded."""


def render_user_turn(case_input: Any) -> str:
    """The user turn for a case: each key of an object input as <key>...</key>, a string as it is."""
    if isinstance(case_input, str):
        return case_input
    if isinstance(case_input, dict):
        parts = []
        for key, value in case_input.items():
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
            parts.append(f"<{key}>\n{text}\n</{key}>")
        return "\n".join(parts)
    return json.dumps(case_input, ensure_ascii=False, indent=2)


def structured_output_config(schema: dict[str, Any]) -> dict[str, Any]:
    """The request field asking Claude to answer with JSON matching `schema` (made strict as the SDK does)."""
    from evalkit.client import json_schema_format

    return {"format": json_schema_format(schema)}


@dataclass
class PythonSystem:
    """A plain function `predict(input) -> output`: a baseline, or your own pipeline."""

    name: str
    fn: Callable[[Any], Any]
    origin: str
    code_hash: str | None = None
    free: bool = False  # a local baseline makes no paid calls: its cost is a known zero, not an unknown

    model: str | None = None

    def describe(self) -> dict[str, Any]:
        return {"kind": "python", "name": self.name, "origin": self.origin, "code_hash": self.code_hash}


@dataclass
class ClaudeSystem:
    """A suite's prompt.md as the system prompt, its model settings, and its output schema if it has one."""

    prompt: str
    model: str
    max_tokens: int = 1024
    temperature: float | None = 0.0
    top_p: float | None = None
    thinking_budget: int | None = None
    output_schema: dict[str, Any] | None = None
    name: str = "claude"
    prompt_path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt_hash(self) -> str:
        return sha256_hex(self.prompt)[:12]

    def build_request(self, case_input: Any) -> dict[str, Any]:
        """The plain-JSON messages.create arguments for one case: what the cache key hashes."""
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.prompt,
            "messages": [{"role": "user", "content": render_user_turn(case_input)}],
        }
        if self.temperature is not None and self.thinking_budget is None:
            request["temperature"] = self.temperature
        if self.top_p is not None:
            request["top_p"] = self.top_p
        if self.thinking_budget is not None:
            request["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        if self.output_schema is not None:
            request["output_config"] = structured_output_config(self.output_schema)
        return request | self.extra

    def parse_output(self, text: str, parsed_json: Any = None) -> Any:
        """The system's output: the structured JSON when a schema was asked for, else the stripped text."""
        if self.output_schema is None:
            return text.strip()
        if parsed_json is not None:
            return parsed_json
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text.strip()  # graded as is: a schema check will say why it fails

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "claude",
            "name": self.name,
            "model": self.model,
            "max_tokens": self.max_tokens,
            # what build_request sends: with thinking, no temperature
            "temperature": self.temperature if self.thinking_budget is None else None,
            "top_p": self.top_p,
            "thinking_budget": self.thinking_budget,
            "prompt_path": self.prompt_path,
            "prompt_hash": self.prompt_hash,
            "output_schema_hash": content_hash(self.output_schema) if self.output_schema else None,
        }


System = PythonSystem | ClaudeSystem


def _load_file_function(path: Path, func: str, spec: str | None = None) -> Callable[[Any], Any]:
    """`func` from the Python file at `path`, imported as a module of its own, checked to take one input.

    The file's folder is first on sys.path while the file is imported, so it can import a module next to it
    (`from helpers import LABEL`). Such a helper module is cached in sys.modules under its own name
    (`helpers`): another file imported later in the same process that imports a `helpers` of its own gets
    the first one."""
    label = spec or f"{path}:{func}"
    mod_name = f"evalkit_system_{path.stem}_{sha256_hex(str(path.resolve()))[:10]}"
    module_spec = importlib.util.spec_from_file_location(mod_name, path)
    if module_spec is None or module_spec.loader is None:
        raise SystemError_(
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
                raise SystemError_(f"system {label!r}: {_import_failure(str(path), exc)}") from exc
        fn = getattr(module, func, None)
        if fn is None:
            raise SystemError_(
                f"system {label!r}: {path} has no function {func!r}; define `def {func}(input): ...`"
            )
        return _checked_function(fn, label, func)
    except BaseException:
        sys.modules.pop(mod_name, None)  # nothing half-loaded is left behind
        raise


def _load_module_function(target: str, func: str, spec: str) -> PythonSystem:
    """`func` from the module `target`, imported with the current directory first on sys.path."""
    if target.startswith("."):
        raise SystemError_(
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
            raise SystemError_(
                f"cannot import module {target!r} for system {spec!r}: {exc}. evalkit looks in the current "
                f"directory ({cwd}) and the installed packages: run it from the folder that holds the module, "
                f"add that folder to PYTHONPATH, or name the file instead (path/to/file.py:{func}){file_hint}"
            ) from exc
        raise SystemError_(f"system {spec!r}: {_import_failure(f'module {target!r}', exc)}") from exc
    except (Exception, SystemExit) as exc:
        raise SystemError_(f"system {spec!r}: {_import_failure(f'module {target!r}', exc)}") from exc
    fn = getattr(module, func, None)
    if fn is None:
        raise SystemError_(f"system {spec!r}: module {target!r} has no function {func!r}")
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
    """`fn` if it can be called as `fn(input)` and returns its output (not a coroutine); else a SystemError_."""
    expected = f"define `def {func}(input): ...` (one positional argument, any others with defaults)"
    if not callable(fn):
        raise SystemError_(f"system {spec!r}: {func!r} is a {type(fn).__name__}, not a function; {expected}")
    if (
        inspect.iscoroutinefunction(fn)
        or inspect.isasyncgenfunction(fn)
        or inspect.iscoroutinefunction(type(fn).__call__)  # an object with `async def __call__`
    ):
        raise SystemError_(
            f"system {spec!r}: {func} is `async def`, but evalkit calls a system synchronously; {expected} "
            "(it may run a coroutine itself with asyncio.run)"
        )
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have none: called as they are
        return cast("Callable[[Any], Any]", fn)
    try:
        signature.bind(None)
    except TypeError:
        raise SystemError_(
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


def load_system(spec: str | None, suite: Suite) -> System:
    """Resolve `baseline`, `claude`, `path/to/file.py:function` or `package.module:function`.

    None is the suite's default_system. A relative file path there (or a spec that is the same text) is resolved
    against the suite's folder, as suite.toml's other paths are; one given on the command line against the current
    directory first, then the suite's folder. A file system's name is its spec with the file's absolute path, so
    `evalkit run --resume` (which loads the manifest's name) finds it from any directory. A module is imported with
    the current directory first on sys.path. Anything wrong is a SystemError_ naming the spec."""
    from_suite = spec is None or spec == suite.config.default_system
    spec = suite.config.default_system if spec is None else spec
    if spec == "baseline":
        path = suite.resolve(suite.config.baseline).resolve()
        if not path.exists():
            raise SystemError_(
                f"suite {suite.name} has no baseline ({path} not found); use --system claude or module:function"
            )
        return PythonSystem(
            "baseline", _load_file_function(path, "predict", spec), str(path), _file_hash(path), free=True
        )
    if spec == "claude":
        path = suite.resolve(suite.config.prompt)
        if not path.exists():
            raise SystemError_(
                f"suite {suite.name} has no prompt ({path} not found); write the system prompt there"
            )
        prompt = path.read_text(encoding="utf-8")
        if not prompt.strip():
            raise SystemError_(f"suite {suite.name}'s prompt {path} is empty; write the system prompt there")
        if suite.output_schema is not None:
            from evalkit.suite import UNSENDABLE_SCHEMA_HINT, unsendable_schema

            why = unsendable_schema(suite.output_schema)
            if why is not None:
                raise SystemError_(
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
        )
    if ":" not in spec:
        more = f"; name the function too, e.g. {spec}:predict" if spec.endswith(".py") else ""
        raise SystemError_(
            f"unknown system {spec!r}: use baseline, claude, module:function or path/file.py:function{more}"
        )
    target, func = spec.rsplit(":", 1)
    if not target.strip():
        raise SystemError_(
            f"system {spec!r} names no module or file before the ':'; write module:function or path/file.py:function"
        )
    if not func.strip():
        raise SystemError_(f"system {spec!r} names no function after the ':'; write e.g. {target}:predict")
    if target.endswith(".py"):
        path = Path(target)
        # suite.toml's default_system: against the suite's folder, as its other paths; the command line's against
        # the current directory, then the suite's folder
        if not path.is_absolute() and (from_suite or not path.exists()):
            path = suite.resolve(target)
        where = f" (default_system of suite {suite.name}, looked for at {path})" if from_suite else ""
        if not path.exists():
            raise SystemError_(f"system file {target!r} not found{where}")
        if not path.is_file():
            raise SystemError_(f"system file {target!r} is not a file{where}")
        path = path.resolve()
        fn = _load_file_function(path, func, spec)
        return PythonSystem(f"{path}:{func}", fn, str(path), _file_hash(path))
    return _load_module_function(target, func, spec)


def _file_hash(path: Path) -> str:
    return sha256_hex(path.read_text(encoding="utf-8"))[:12]
