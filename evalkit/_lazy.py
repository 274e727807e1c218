"""A package face written once: its ``__init__`` imports each name, and `attach` derives the rest from that.

A face lists each name in exactly one import. Imports at the top level run as usual; imports under
``if TYPE_CHECKING:`` are what type checkers and readers see, and `attach` makes them real on first use, so
``import evalkit`` stays fast. Every name imported from an evalkit module is exported (``__all__``), except
those under ``if INTERNAL:``: evalkit's other packages use them through the face, but they are not part of the
public surface (loaded on first use too)::

    from typing import TYPE_CHECKING

    from evalkit._lazy import INTERNAL, attach
    from evalkit.suite._cases import Case          # exported, imported now

    if TYPE_CHECKING:
        from evalkit.suite._load import load_suite  # exported, imported when first used

    if INTERNAL:
        from evalkit.suite._cases import case_line  # not exported, imported when first used

    __getattr__, __dir__, __all__ = attach(__name__, __file__)
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path

INTERNAL = False
"""Like ``typing.TYPE_CHECKING``, false at run time: a face's ``if INTERNAL:`` block names what evalkit's other
packages import from it without exporting it."""


def _flag(test: ast.expr) -> str | None:
    name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
    return name if name in ("TYPE_CHECKING", "INTERNAL") else None


def face(source: str) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """From an ``__init__``'s source: the lazy names (name -> (module, attribute)) and every exported name."""
    lazy: dict[str, tuple[str, str]] = {}
    names: list[str] = []
    for node in ast.parse(source).body:
        flag = _flag(node.test) if isinstance(node, ast.If) else None
        if isinstance(node, ast.If) and flag is not None:
            for sub in node.body:
                if (
                    isinstance(sub, ast.ImportFrom)
                    and sub.level == 0
                    and (sub.module or "").startswith("evalkit")
                ):
                    for alias in sub.names:
                        lazy[alias.asname or alias.name] = (sub.module or "", alias.name)
                        if flag == "TYPE_CHECKING":
                            names.append(alias.asname or alias.name)
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").startswith("evalkit")
            and node.module != __name__
        ):
            names.extend(alias.asname or alias.name for alias in node.names)
    return lazy, sorted(set(names))


def attach(
    package: str, init_file: str
) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for the package whose ``__init__`` is `init_file`."""
    lazy, names = face(Path(init_file).read_text(encoding="utf-8"))

    def __getattr__(name: str) -> object:
        try:
            module, attribute = lazy[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), attribute)
        # kept in the package, so the next lookup is a plain attribute and not another call through __getattr__
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(names) | set(lazy) | set(vars(sys.modules[package])))

    return __getattr__, __dir__, names
