"""No import circles in service/ or clients/: every import counts, the lazy ones inside
functions and under ``TYPE_CHECKING`` too (a lazy import hides a circle, it does not remove it).

The walk reads each module's AST, resolves relative imports, keeps the edges between the
project's own modules and looks for strongly connected components: any with more than one
module (or a module importing itself) is a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "cpsettle_service": ROOT / "service" / "cpsettle_service",
    "cpsettle_client": ROOT / "clients" / "python" / "cpsettle_client",
}


def modules(packages: dict[str, Path]) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of ``packages`` (a package is its
    ``__init__``)."""
    found: dict[str, Path] = {}
    for name, folder in packages.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [name, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``module`` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()

    def add(name: str) -> None:
        # ``import a.b.c`` names a.b.c; ``from a.b import c`` names a.b.c when c is a module
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            out.add(name)

    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base.pop()
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                add(f"{source}.{alias.name}")
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with a circle in them (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def graph_of(packages: dict[str, Path]) -> dict[str, set[str]]:
    found = modules(packages)
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}


def test_no_import_circles_in_service_or_clients() -> None:
    graph = graph_of(PACKAGES)
    assert len(graph) >= 30
    # the walk sees the lazy imports: the CLI reaches the service only inside --local
    assert "cpsettle_service.local" in graph["cpsettle_client.backend"]
    assert circles(graph) == []


def test_the_walk_finds_a_circle_hidden_in_a_function(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("def g():\n    import pkg.a\n")
    (pkg / "d.py").write_text("from . import a\nfrom .d import x\n")
    graph = graph_of({"pkg": pkg})
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert circles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"], ["pkg.d"]]
