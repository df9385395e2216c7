"""The executive-facing synthesis of a read (hooks A and D): short, and every claim cites ids."""

from __future__ import annotations

from collections.abc import Sequence

from executive.memory.read.pack import short_id
from executive.memory.read.reading import ReadResult
from executive.memory.store.base import MemoryRecord
from executive.untrusted import clip

QUOTE_CHARS = 140


def cite(record: MemoryRecord) -> str:
    return f"[{short_id(record.id)}]"


def bullet(record: MemoryRecord, limit: int = QUOTE_CHARS) -> str:
    text = " ".join(record.text.split())
    return f"- {cite(record)} ({record.type}) {clip(text, limit)}"


def render(
    topic: str,
    result: ReadResult,
    body: Sequence[str],
    caveats: Sequence[str] = (),
) -> str:
    """``## Memory consultation: <topic>``, counts, the body paragraphs, caveats."""
    lines = [
        f"## Memory consultation: {topic}",
        f"Queries issued: {len(result.questions)}",
        f"Memories surfaced: {len(result.memories)}",
        "",
        *body,
    ]
    notes = list(caveats)
    if not result.memories:
        asked = "; ".join(f"“{q}”" for q in result.questions)
        notes.append(f"no prior memory matched; questions asked: {asked}")
    if notes:
        lines += ["", "Caveats: " + " ".join(note.rstrip(".") + "." for note in notes)]
    return "\n".join(lines).strip() + "\n"
