"""``workspace/needs-you.md``: what the executive cannot do alone, for a person to act on."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from executive.workspace.state import now_iso

# How much of a failure a person needs to see to act, without pasting a whole log.
ERROR_TAIL_LINES = 12
ERROR_TAIL_CHARS = 1500
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def add_entry(
    path: Path,
    title: str,
    lines: Sequence[str],
    blocks: Sequence[tuple[str, str]] = (),
) -> None:
    """Append one dated entry; never rewrites what is there (a person may be editing it).

    ``blocks`` are (label, text) pairs shown verbatim in a fence: text from a worker or a
    hook is data to read, never markdown that could pose as a heading of this file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "\n".join(f"- {one_line(line)}" for line in lines)
    for label, text in blocks:
        body += f"\n\n{one_line(label)}:\n\n{fenced(text)}"
    with path.open("a") as handle:
        handle.write(f"\n## {now_iso()[:19]}Z · {one_line(title)}\n\n{body}\n")


def error_tail(error: str) -> str:
    """The last lines of an error: where the cause usually is."""
    lines = error.rstrip().splitlines()[-ERROR_TAIL_LINES:]
    return "\n".join(lines)[-ERROR_TAIL_CHARS:]


def fenced(text: str) -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    clean = _CONTROL.sub("", text.replace("\r\n", "\n"))
    longest = max((len(run) for run in re.findall(r"`+", clean)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{clean}\n{fence}"


def one_line(text: str) -> str:
    return " ".join(_CONTROL.sub(" ", text).split())
