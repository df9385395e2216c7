"""The files a memory is about, and the files a goal names: how a pack reaches code.

A memory's envelope may list repository-relative ``files`` (Hook C fills it from what the
worker changed). A goal or step that names a path, or whose project holds memories about
files beside it (the same folder), makes the pack ask about those files too.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from executive import relpath
from executive.memory.store.base import MemoryRecord

MAX_NAMED = 4
_EXTENSIONS = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|scala|sh|bash|"
    "toml|yaml|yml|json|cfg|ini|sql|md|rst|html|css|scss|vue|svelte|lock|txt"
)
# ``src/weather/parser.py`` or ``parser.py``: not part of a URL, an address or a version.
_PATH = re.compile(
    rf"(?<![\w/.:@-])((?:[\w.-]+/)+[\w.-]+\.(?:{_EXTENSIONS})|[\w-]+\.(?:{_EXTENSIONS}))(?![\w/-])"
)


def paths_in(text: str) -> tuple[str, ...]:
    """The file paths ``text`` names, in order, each once, in plain relative form."""
    found = (relpath.normal(m.group(1).rstrip(".")) for m in _PATH.finditer(text))
    return tuple(dict.fromkeys(p for p in found if p))[:MAX_NAMED]


# ``models.base.ModelBase``, ``sympy.physics.units``: a module named the way code names it.
_MODULE = re.compile(
    r"(?<![\w./-])((?:[a-z_][a-z0-9_]*\.){1,6}[a-z_][a-z0-9_]*)(?:\.[A-Z]\w*)*(?![\w/-])"
)
_NOT_MODULES = frozenset(["self", "cls", "os", "sys", "e", "i", "np", "pd", "re"])


def modules_in(text: str) -> tuple[str, ...]:
    """The files the dotted module names in ``text`` would be (``models/base.py`` for
    ``models.base.ModelBase``): suffixes to match a memory's files against, never paths."""
    found = []
    for match in _MODULE.finditer(text):
        parts = match.group(1).split(".")
        if parts[0] in _NOT_MODULES or parts[-1] in ("py", "txt", "md", "com", "org"):
            continue
        found.append("/".join(parts) + ".py")
    return tuple(dict.fromkeys(found))[:MAX_NAMED]


def naming(record: MemoryRecord, named: tuple[str, ...]) -> bool:
    """Whether a memory is about a file the work names (a path, or the end of one)."""
    return any(p == n or p.endswith("/" + n) for p in files_of(record) for n in named)


def near(named: Iterable[str], records: Iterable[MemoryRecord]) -> list[str]:
    """Files the records are about that sit in a folder of a named path (not named ones),
    most often mentioned first, then by path: the neighbours a change is likely to touch."""
    wanted = list(named)
    folders = {posixpath.dirname(p) for p in wanted if "/" in p}
    counts: dict[str, int] = {}
    for record in records:
        for path in files_of(record):
            if path not in wanted and posixpath.dirname(path) in folders:
                counts[path] = counts.get(path, 0) + 1
    return sorted(counts, key=lambda p: (-counts[p], p))[:MAX_NAMED]


def files_of(record: MemoryRecord) -> list[str]:
    """The files a memory is about (its envelope's ``files``), or none."""
    files = record.metadata.get("files")
    return [p for p in files if isinstance(p, str)] if isinstance(files, list) else []


def files_question(paths: Iterable[str]) -> str:
    """The question a pack asks about files: what changed there, what broke, what fixed it."""
    return (
        f"What do we know about {', '.join(paths)}: what was changed there, what failed, "
        "and what fixed it?"
    )
