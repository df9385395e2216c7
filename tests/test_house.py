"""The house rules a newcomer can rely on: no function in ``src/executive`` over 60 lines, no
module over 400 lines, no modules importing each other in a circle.

A function's length is its lines from ``def`` to its last line, as the AST gives them (its
docstring and comments included). SQL text is set aside: a function that is a list of
statements is as long as its SQL. The allow-list holds the functions being split right now
(issue 28); an entry that no longer needs it fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import grimp

MAX_LINES = 60
MAX_MODULE_LINES = 400
SOURCE = Path(__file__).resolve().parents[1] / "src" / "executive"

# SQL text aside: DDL statements, one after another.
SQL_TEXT = {
    "memory/store/pgschema.py:statements",
}

# Functions being split right now, each named with why; none today.
ALLOWED: set[str] = set()


def functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function in a module, nested ones too, by qualified name (``Class.method``)."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((prefix + child.name, child))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


@cache
def long_functions() -> dict[str, str]:
    """``path:qualname`` -> ``path:line qualname length`` for every function over the limit."""
    out: dict[str, str] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE).as_posix()
        for name, node in functions(ast.parse(path.read_text(), str(path))):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_LINES:
                out[f"{relative}:{name}"] = f"{relative}:{node.lineno} {name} {length} lines"
    return out


def test_no_function_is_over_60_lines():
    found = long_functions()
    over = [found[key] for key in sorted(found) if key not in ALLOWED | SQL_TEXT]
    assert not over, f"functions over {MAX_LINES} lines (split them):\n" + "\n".join(over)


def test_the_allow_list_only_holds_long_functions():
    found = long_functions()
    stale = sorted((ALLOWED | SQL_TEXT) - found.keys())
    assert not stale, "now at most 60 lines (or gone): take them off the list:\n" + "\n".join(stale)


def test_the_measure_sees_nested_functions_and_methods():
    source = "class A:\n    def m(self):\n        def inner():\n" + "            x = 1\n" * 61
    (method, inner) = functions(ast.parse(source))
    assert (method[0], inner[0]) == ("A.m", "A.m.inner")
    assert inner[1].end_lineno - inner[1].lineno + 1 == 62


def test_no_module_is_over_400_lines():
    over = [
        f"{path.relative_to(SOURCE).as_posix()} {lines} lines"
        for path in sorted(SOURCE.rglob("*.py"))
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert not over, f"modules over {MAX_MODULE_LINES} lines (split them):\n" + "\n".join(over)


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Groups of modules that import each other in a circle (Tarjan's strongly connected
    components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while (top := stack.pop()) != module:
                group.append(top)
            if group:
                found.append(sorted([module, *group]))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_modules_import_each_other_in_a_circle_type_only_imports_included():
    graph = grimp.build_graph("executive", exclude_type_checking_imports=False)
    assert _cycles(graph) == []
