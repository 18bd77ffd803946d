"""The layering holds: the core (``deid_core``) knows neither Streamlit nor the dashboard, and no
module imports one that imports it, directly or through others (CONTRIBUTING.md, "Layout").

Imports are read from the source (module level and inside functions alike); ``from P import
name`` counts as an import of ``P.name`` when that is a module of the tree, else of ``P``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("deid_core", "dashboard", "app_pages")


def module_files() -> dict[str, Path]:
    """Every module of the tree by dotted name (a package by its ``__init__.py``)."""
    modules = {"app": ROOT / "app.py"}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def imported_modules(path: Path, module: str, modules: dict[str, Path]) -> set[str]:
    """The modules of the tree that the file imports anywhere (relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, base] if base else parents)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                names.add(submodule if submodule in modules else base)
    found = set()
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the tree it imports."""
    modules = module_files()
    return {module: imported_modules(path, module, modules) for module, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_one_that_imports_it():
    graph = import_graph()
    assert "deid_core.cli.main" in graph and graph["deid_core.workspace"]
    assert cycles(graph) == []


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_core_imports_neither_streamlit_nor_the_dashboard():
    for module, path in module_files().items():
        if not module.startswith("deid_core"):
            continue
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        outside = sorted(n for n in names if n.split(".")[0] in {"streamlit", *PACKAGES[1:]})
        assert outside == [], f"{module} imports {outside}"
