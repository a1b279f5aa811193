"""The package's import graph, read from the source (module-level and function-level imports alike):
no cycle, no shared module importing a study (only costlab/registry.py reads each study's face), no
study importing another."""
from __future__ import annotations

import ast
import re
import tomllib
from functools import lru_cache
from pathlib import Path

from costlab.config import ROOT
from costlab.registry import BUILT_IN

PACKAGE = ROOT / "costlab"
STUDY_PACKAGES = {f"costlab.{study.name}" for study in BUILT_IN}
REGISTRY_MODULE = "costlab.registry"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imported(node: ast.AST, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The costlab modules an import statement loads (the deepest known module of each name)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:   # relative: from the module's package
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, base] if base else package)
        names = [f"{base}.{alias.name}" for alias in node.names] + [base]
    found = []
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.append(name)
    return found


@lru_cache(maxsize=1)
def import_graph() -> dict[str, set[str]]:
    """module -> the costlab modules it imports anywhere in its source (TYPE_CHECKING blocks too)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges.update(_imported(node, module, path.name == "__init__.py", known))
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
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


def _study_of(module: str) -> str | None:
    for package in STUDY_PACKAGES:
        if module == package or module.startswith(package + "."):
            return package
    return None


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    known = {"costlab", "costlab.a", "costlab.b", "costlab.b.c"}
    source = "def f():\n    from costlab.b import c\n    from . import a\n"
    nodes = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)]
    assert _imported(nodes[0], "costlab.x", False, known) == ["costlab.b.c", "costlab.b"]
    assert _imported(nodes[1], "costlab.x", False, known) == ["costlab.a", "costlab"]


def test_cycles_are_found_in_a_graph_that_has_them():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_shared_modules_import_no_study_and_no_study_imports_another():
    wrong = []
    for module, targets in import_graph().items():
        own = _study_of(module)
        for target in targets:
            other = _study_of(target)
            if other is None or other == own:
                continue
            if module == REGISTRY_MODULE and target == other:
                continue   # the registry reads each study's face (its __init__), nothing deeper
            wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_the_graph_covers_the_whole_package():
    graph = import_graph()
    assert len(graph) > 100
    # the registry's edges are the studies' faces
    assert STUDY_PACKAGES <= graph[REGISTRY_MODULE]


# An import below module scope says why it is there (ruff's PLC0415 asks only for the noqa).
NOQA_WITH_REASON = re.compile(
    r"#\s*noqa:\s*(?:[A-Z]+[0-9]+\s*,\s*)*PLC0415(?:\s*,\s*[A-Z]+[0-9]+)*\s+(\S.{3,})$")


def imports_below_module_scope(source: str) -> list[tuple[int, str]]:
    """(line number, first line) of each import statement inside a function or a class."""
    found = []
    lines = source.splitlines()

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and nested:
                found.append((child.lineno, lines[child.lineno - 1]))
            visit(child, nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))

    visit(ast.parse(source), False)
    return found


def unexplained(source: str) -> list[str]:
    return [f"{number}: {line.strip()}" for number, line in imports_below_module_scope(source)
            if not NOQA_WITH_REASON.search(line)]


def test_the_reason_check_tells_an_explained_import_from_a_bare_one():
    source = ("import os\n\n\nclass A:\n    import json  # noqa: PLC0415\n\n\n"
              "def f():\n    if os.sep:\n"
              "        import polars  # noqa: PLC0415  heavy: polars; the rules import this\n"
              "    import bson  # noqa: E501, PLC0415  heavy: bson, not otherwise loaded here\n"
              "    import sys\n")
    assert unexplained(source) == ["5: import json  # noqa: PLC0415", "12: import sys"]


def test_every_import_inside_a_function_says_why():
    wrong = []
    for path in [*sorted(PACKAGE.rglob("*.py")), *sorted((ROOT / "scripts").glob("*.py"))]:
        wrong += [f"{path.relative_to(ROOT)}:{line}" for line in unexplained(path.read_text())]
    assert wrong == [], "imports below module scope without `# noqa: PLC0415  <why>`:\n" + "\n".join(wrong)


def test_ruff_checks_imports_outside_the_top():
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert "PLC0415" in lint["select"]
