"""The package's shape: no import circle between modules or packages (imports for type checking counted between
packages), no reach into another package's private modules, and the SDK imported in one place."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evalkit"


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _runtime_imports(tree: ast.AST, typing: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that runs, function-level ones included; `if TYPE_CHECKING:` blocks never run, and are
    included only with `typing`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) and not typing:
            yield from (n for branch in node.orelse for n in _runtime_imports(branch, typing))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _runtime_imports(node, typing)


def _graph(typing: bool = False) -> dict[str, set[str]]:
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        for node in _runtime_imports(ast.parse(f.read_text(encoding="utf-8")), typing):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and (node.module or "").startswith("evalkit")
            ):
                assert node.module is not None
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    target = full if full in mods else resolve(node.module)
                    if target and target != m and not m.startswith(target + "."):
                        graph[m].add(target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    target = resolve(alias.name) if alias.name.startswith("evalkit") else None
                    if target and target != m and not m.startswith(target + "."):
                        graph[m].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_no_import_circle_between_modules() -> None:
    assert _cycles(_graph()) == []


def test_no_import_circle_between_packages() -> None:
    # an import for type checking only is still a dependency: a circle through one is a design circle
    packages: dict[str, set[str]] = {}
    for m, targets in _graph(typing=True).items():
        for t in targets:
            if _package(m) != _package(t) and _package(t) != "evalkit":
                packages.setdefault(_package(m), set()).add(_package(t))
    assert _cycles(packages) == []


def test_nothing_imports_the_cli() -> None:
    def is_cli(name: str) -> bool:
        return name == "evalkit.cli" or name.startswith("evalkit.cli.")

    users = [m for m, targets in _graph().items() if not is_cli(m) and any(is_cli(t) for t in targets)]
    assert users == []


def test_only_the_client_package_imports_the_sdk() -> None:
    offenders = []
    for m, f in _modules().items():
        if m.startswith("evalkit._client"):
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(n == "anthropic" or n.startswith("anthropic.") for n in names):
                offenders.append(m)
    assert offenders == []


def _reach_ins(module: str, source: str) -> list[str]:
    """Imports in `module` of another package's private module, or of a private name of another package."""
    found = []
    mine = _package(module)
    for node in _runtime_imports(ast.parse(source), typing=True):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            targets = [(node.module or "", [a.name for a in node.names])]
        elif isinstance(node, ast.Import):
            targets = [(a.name, []) for a in node.names]
        else:
            continue
        for target, names in targets:
            if not target.startswith("evalkit.") or _package(target) == mine:
                continue
            deep = target.split(".")[2:]
            if any(part.startswith("_") for part in deep):
                found.append(f"{module} imports {target}")
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                found.append(f"{module} imports {', '.join(private)} from {target}")
    return found


def test_no_package_reaches_into_another_packages_private_modules() -> None:
    offenders = [x for m, f in _modules().items() for x in _reach_ins(m, f.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_reach_in_checker_sees_one() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from evalkit._runner import Runner\n"  # a package's face: fine
        "from evalkit.probes._live import parallel\n"  # same package: fine
        "if TYPE_CHECKING:\n"
        "    from evalkit._runner._context import RunContext\n"
        "def f():\n"
        "    from evalkit.graders import _MISSING\n"
    )
    assert _reach_ins("evalkit.probes._x", source) == [
        "evalkit.probes._x imports evalkit._runner._context",
        "evalkit.probes._x imports _MISSING from evalkit.graders",
    ]


def test_the_checker_sees_a_circle() -> None:
    # guards the guard: a graph with a cycle is reported
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
