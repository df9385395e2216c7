"""Text from untrusted hands (a worker's output, a goal, a title, a memory) made into data.

Markdown that a person or a worker reads must not let such text pose as structure: no
control characters (bidi overrides included), titles on one line, blocks in a fence that
nothing inside can close.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, the bidi overrides and isolates that
# make text read differently from what it is, and lone surrogates (bytes that were not
# UTF-8, as a file name decodes): no file or JSON we write can hold them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_FENCE_RUN = re.compile(r"`+|~+")


def clean(text: str) -> str:
    """``text`` with control characters removed and line endings made ``\\n``."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def one_line(text: str) -> str:
    """A title: one line, whitespace runs collapsed, no control characters."""
    return " ".join(clean(text).split())


def fence(text: str, info: str = "text") -> str:
    """``text`` as a fenced block that nothing inside it can close."""
    body = clean(text).rstrip("\n")
    longest = max((len(run) for run in _FENCE_RUN.findall(body)), default=0)
    mark = "`" * max(3, longest + 1)
    return f"{mark}{info}\n{body}\n{mark}"


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, marked ``…`` when cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def opening(text: str, limit: int) -> str:
    """The start of ``text`` up to ``limit`` characters, cut after a sentence (or a line) when
    one ends in its second half, else after a word, and marked ``…`` when cut: a person reads
    a record from its beginning, so a cut keeps that, never a mid-word tail."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    end = max(head.rfind(mark) + len(mark) - 1 for mark in (". ", ".\n", "\n\n", "? ", "! "))
    if end < limit // 2:
        end = head.rfind(" ")
    return head[: end + 1 if end > 0 else len(head)].rstrip() + " …"


def ending(text: str, limit: int) -> str:
    """The end of ``text`` in at most ``limit`` characters, from the start of a word (or a
    line), marked ``…`` when cut: a tail a person reads starts where a word does, never in the
    middle of one (a word longer than half the limit is cut all the same)."""
    if len(text) <= limit:
        return text
    start = len(text) - (limit - 2)  # room for the mark and its space
    if not text[start - 1].isspace():
        space = next((i for i in range(start, len(text) - limit // 2) if text[i].isspace()), None)
        start = start if space is None else space + 1
    return "… " + text[start:].lstrip()
