"""The package's shape: no import circle between modules or packages, and the SDK imported in one place."""

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


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that runs, function-level ones included; `if TYPE_CHECKING:` blocks never run."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for branch in node.orelse for n in _runtime_imports(branch))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _runtime_imports(node)


def _graph() -> dict[str, set[str]]:
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        for node in _runtime_imports(ast.parse(f.read_text(encoding="utf-8"))):
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
    packages: dict[str, set[str]] = {}
    for m, targets in _graph().items():
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


def test_the_checker_sees_a_circle() -> None:
    # guards the guard: a graph with a cycle is reported
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
