"""Which functions and classes a worker's edits touched, read off its own record.

A later run that must change the same code is found by the names it will meet (a class, a
method), so a run's card names them. The record holds what it takes: an edit's old and new
text, and the file's lines as a tool last showed them (a ``Read``, or the ``cat -n`` snippet
an ``Edit`` answers with, each line ``   N→text``). The enclosing definitions of an edit are
found by walking up from its first line to the lines less indented that define something
(``def``, ``class``, ``function``, ``func``, ``fn``, ``impl``, ``module``...): the chain
``Class.method``. A definition the new text itself makes is named too. Names are the worker's
text, so only identifiers are kept; nothing here raises on what a record holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_DEFINES = re.compile(
    r"^(?P<indent>[ \t]*)(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function|fn|func(?:\s*\([^)]*\))?|module|struct|impl|trait|interface)\s+"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
)
_NUMBERED = re.compile(r"^\s*(\d+)→(.*)$")


def numbered(text: str) -> dict[int, str]:
    """The lines of a tool's ``N→text`` listing, by number (empty when it is none)."""
    return {int(m.group(1)): m.group(2) for raw in text.splitlines() if (m := _NUMBERED.match(raw))}


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def enclosing(lines: Mapping[int, str], at: int) -> list[tuple[int, str]]:
    """The definitions around line ``at`` with their indentation, outermost first
    (``[(0, "Mixin"), (4, "get_response")]``); the line itself counts when it defines."""
    here = lines.get(at, "")
    level = _indent(here) if here.strip() else 10_000
    found = _DEFINES.match(here)
    chain = [(level, found.group("name"))] if found else []
    for number in sorted((n for n in lines if n < at), reverse=True):
        line = lines[number]
        if not line.strip() or _indent(line) >= level:
            continue
        level = _indent(line)
        found = _DEFINES.match(line)
        if found:
            chain.insert(0, (level, found.group("name")))
        if level == 0:
            break
    return chain


def _located(lines: Mapping[int, str], text: str) -> int | None:
    """The number of the line where ``text``'s first non-blank line is, if shown once."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not first:
        return None
    at = [n for n, line in lines.items() if line.strip() == first]
    return at[0] if len(at) == 1 else None


def defined(text: str, top_only: bool = False) -> list[tuple[int, str]]:
    """The names ``text`` defines with their indentation (the least-indented only, when
    ``top_only``)."""
    found = [
        (_indent(m.group("indent")), m.group("name"))
        for line in text.splitlines()
        if (m := _DEFINES.match(line))
    ]
    if top_only and found:
        least = min(level for level, _ in found)
        found = [(level, name) for level, name in found if level == least]
    return list(dict.fromkeys(found))


def of_edit(shown: Mapping[int, str], old: str, new: str) -> list[str]:
    """The dotted names an edit of ``old`` into ``new`` touched, given the file's lines as
    last shown: what ``new`` defines, inside the definitions around where ``old`` stood,
    or else the innermost of those."""
    at = _located(shown, old) if old.strip() else None
    chain = enclosing(shown, at) if at is not None else []
    names = [
        ".".join([*(n for level, n in chain if level < depth), name])
        for depth, name in defined(new)
    ]
    if chain and not names:
        names.append(".".join(n for _, n in chain))
    return names
