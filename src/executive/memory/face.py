"""A room's face that imports what it names when a name is first asked for (PEP 562).

A room's modules import one another, and importing any of them runs the room's
``__init__`` first. A face that imported its names at once would load the whole room, and
the rooms that one reaches, whenever a command touched a single module: every
``executive`` command started ~130 ms slower. So a face names what it offers once, in its
``TYPE_CHECKING`` imports (what type checkers and import-linter read) and ``__all__``
(``tests/memory/test_face.py`` checks that the two agree); the first time a name is asked
for, the face reads where it lives from those imports and imports that module.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any


@functools.cache
def static_imports(package: str) -> dict[str, tuple[str, str]]:
    """The ``if TYPE_CHECKING:`` imports of ``package``'s face: name -> (module, attribute)."""
    source = Path(sys.modules[package].__file__ or "").read_text()
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imported in node.body:
                if isinstance(imported, ast.ImportFrom) and imported.module:
                    for alias in imported.names:
                        found[alias.asname or alias.name] = (imported.module, alias.name)
    return found


def on_first_use(package: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``'s face."""

    def load(name: str) -> Any:
        where = static_imports(package).get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(where[0]), where[1])
        setattr(sys.modules[package], name, value)  # asked once: later reads skip this
        return value

    return load
