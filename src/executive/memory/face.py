"""A room's face that imports what it names when a name is first asked for (PEP 562).

A room's modules import one another, and importing any of them runs the room's
``__init__`` first. A face that imported its names at once would load the whole room, and
the rooms that one reaches, whenever a command touched a single module: every
``executive`` command started ~130 ms slower. So a face keeps a table of its names and
where each lives, and imports a name's module when the name is first asked for. Its
``TYPE_CHECKING`` imports say the same thing for type checkers and import-linter, and
``tests/memory/test_face.py`` checks that the two lists agree.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def on_first_use(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``'s face. ``names`` maps a name to ``module`` (the
    same name there) or ``module:attribute``."""

    def load(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")
        value = getattr(import_module(f"{package}.{module}"), attribute or name)
        setattr(sys.modules[package], name, value)  # asked once: later reads skip this
        return value

    return load
