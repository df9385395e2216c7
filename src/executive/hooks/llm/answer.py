"""Hook B's answer: the pack is the final text from the first ``## Memory Pack`` heading on.

The code holds the agent to the skill's 2,000 tokens as the built-in pack does: the last
entries (``### `` headings outside fences) go until it fits, and a line says what was cut;
the agent lists entries by type (principles first), so the cut takes the least binding. A
fence left open is closed, so no pack can swallow what follows it in the worker's CLAUDE.md.
Each entry heading is rebuilt from what it may carry (one of the five types, a source path):
the agent copies memory text, and no word of it may stand in a heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from executive.memory.read import PACK_HEADING, PACK_TOKEN_CAP, estimate_tokens
from executive.memory.taxonomy import MemoryType

_HEADING = re.compile(rf"^[ \t]*{re.escape(PACK_HEADING)}[ \t]*$", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_ENTRY = re.compile(r"^###\s*\[([^\]]*)\]?(.*)$")
_SOURCE = re.compile(r"(?:Source:|·)\s*([A-Za-z0-9._/-]{1,80})")
_TYPES = frozenset(t.value for t in MemoryType)


def entry_heading(line: str) -> str:
    """``### [type] · <path>`` from an agent's heading; any other words dropped."""
    match = _ENTRY.match(line.strip())
    kind = match.group(1).strip() if match else ""
    rest = match.group(2) if match else line
    parts = [f"### [{kind if kind in _TYPES else 'memory'}]"]
    if found := _SOURCE.search(rest):
        parts.append(f"· {found.group(1)}")
    return " ".join(parts)


@dataclass(frozen=True)
class Capped:
    markdown: str
    entries: int
    cut: int
    tokens: int


def extract(text: str) -> str | None:
    """The text from the first ``## Memory Pack`` heading line on, trimmed; None if absent."""
    match = _HEADING.search(text)
    if match is None:
        return None
    pack = text[match.start() :].strip()
    # The skill shows the pack inside a fence; an answer that copies the fence ends with it.
    before = text[: match.start()].rstrip().splitlines()
    opener = _FENCE.match(before[-1]) if before else None
    lines = pack.splitlines()
    if opener and lines and lines[-1].strip() == opener.group(1):
        pack = "\n".join(lines[:-1]).rstrip()
    return pack or None


def _split(pack: str) -> tuple[list[str], list[list[str]], str | None]:
    """Lines before the first entry, the entries, and the fence still open at the end."""
    head: list[str] = []
    entries: list[list[str]] = []
    fence: str | None = None
    for line in pack.splitlines():
        marker = _FENCE.match(line)
        if fence is None and marker:
            fence = marker.group(1)
        elif fence is not None and marker and line.strip() == fence[0] * len(line.strip()):
            if len(line.strip()) >= len(fence):
                fence = None
        elif fence is None and line.startswith("### "):
            entries.append([])
        elif fence is None and (head or entries) and line.lstrip().startswith("#"):
            line = "\\" + line.lstrip()  # a heading the pack does not own: shown, not obeyed
        (entries[-1] if entries else head).append(line)
    return head, entries, fence


def _join(head: list[str], entries: list[list[str]], cut: int) -> str:
    text = "\n".join([*head, *(line for entry in entries for line in entry)]).rstrip()
    if cut:
        text += (
            f"\n\n_…{cut} lower-ranked {'entry was' if cut == 1 else 'entries were'} cut by "
            f"the executive to keep this pack within {PACK_TOKEN_CAP} tokens._"
        )
    return text + "\n"


def cap(pack: str, *, limit: int = PACK_TOKEN_CAP) -> Capped:
    head, entries, fence = _split(pack)
    if fence is not None:  # close it inside the last entry (or the head), where it opened
        (entries[-1] if entries else head).append(fence)
    entries = [[entry_heading(e[0]), *e[1:]] for e in entries]
    kept, cut = entries, 0
    markdown = _join(head, kept, cut)
    while estimate_tokens(markdown) > limit and kept:
        kept.pop()
        cut += 1
        markdown = _join(head, kept, cut)
    while estimate_tokens(markdown) > limit and len(head) > 1:  # an intro alone over the limit
        head.pop()
        markdown = _join(head, kept, cut)
    return Capped(markdown, len(kept), cut, estimate_tokens(markdown))
