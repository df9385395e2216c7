"""``workspace/needs-you.md``: what the executive cannot do alone, for a person to act on."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from executive.dates import now_iso
from executive.redact import scrub
from executive.untrusted import ending, fence, one_line

# How much of a failure a person needs to see to act, without pasting a whole log.
ERROR_TAIL_LINES = 12
ERROR_TAIL_CHARS = 1500


def add_entry(
    path: Path,
    title: str,
    lines: Sequence[str],
    blocks: Sequence[tuple[str, str]] = (),
) -> None:
    """Append one dated entry; never rewrites what is there (a person may be editing it).

    Titles and lines may quote a bundle or a worker: one line each, redacted, no headings.
    ``blocks`` are (label, text) pairs shown verbatim (redacted) in a fence: text from a
    worker or a hook is data to read, never markdown that could pose as part of this file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "\n".join(f"- {_line(line)}" for line in lines)
    for label, text in blocks:
        body += f"\n\n{_line(label)}:\n\n{fence(scrub(text))}"
    with path.open("a") as handle:
        handle.write(f"\n## {now_iso()[:19]}Z · {_line(title)}\n\n{body}\n")


def error_tail(error: str) -> str:
    """The last lines of an error: where the cause usually is."""
    lines = error.rstrip().splitlines()[-ERROR_TAIL_LINES:]
    return ending("\n".join(lines), ERROR_TAIL_CHARS)


def _line(text: str) -> str:
    return scrub(one_line(text))
