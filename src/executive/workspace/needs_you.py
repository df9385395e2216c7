"""``workspace/needs-you.md``: what the executive cannot do alone, for a person to act on.

An entry about a bundle is marked resolved when that bundle completes or is retried (its
heading says when and why), so what is still open reads apart from what is done. Appends and
that rewrite hold a lock on the workspace folder, so neither loses the other's lines.
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from executive.dates import now_iso
from executive.files import atomic_write
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
    """Append one dated entry, never rewriting what is there (a person may be editing it).
    Titles and lines may quote a bundle or a worker: one line each, redacted, no headings;
    ``blocks`` are (label, text) pairs shown verbatim (redacted) in a fence: text from a
    worker or a hook is data to read, never markdown that could pose as part of this file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "\n".join(f"- {_line(line)}" for line in lines)
    for label, text in blocks:
        body += f"\n\n{_line(label)}:\n\n{fence(scrub(text))}"
    with _locked(path), path.open("a") as handle:
        handle.write(f"\n## {now_iso()[:19]}Z · {_line(title)}\n\n{body}\n")


# An entry's heading: its time, then its title (``blocked: <slug>``, ``cancelled: <slug>``).
_HEADING = re.compile(r"^## (?P<at>\S+) · (?P<title>.*)$")
RESOLVED = "RESOLVED"


def resolve(path: Path, slug: str, why: str) -> int:
    """Mark every open entry about bundle ``slug`` resolved, saying when and ``why``
    (``completed``, ``retried``); how many were marked. The entries stay, whole: a person may
    still want to read what happened."""
    if not path.is_file():
        return 0
    with _locked(path):
        lines = path.read_text(errors="replace").splitlines(keepends=True)
        marked = 0
        for number, line in enumerate(lines):
            match = _HEADING.match(line.rstrip("\n"))
            title = match["title"] if match else ""
            if match and title.endswith(f": {slug}") and not title.startswith(RESOLVED):
                lines[number] = (
                    f"## {match['at']} · {RESOLVED} {now_iso()[:16]}Z, {why} · {title}\n"
                )
                marked += 1
        if marked:
            atomic_write(path, "".join(lines))
    return marked


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """The workspace folder's lock (the daemon and the operator's CLI both write this file)."""
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def error_tail(error: str) -> str:
    """The last lines of an error: where the cause usually is."""
    lines = error.rstrip().splitlines()[-ERROR_TAIL_LINES:]
    return ending("\n".join(lines), ERROR_TAIL_CHARS)


def _line(text: str) -> str:
    return scrub(one_line(text))
