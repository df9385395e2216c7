"""``workspace/needs-you.md``: what the executive cannot do alone, for a person to act on."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from executive.redact import scrub
from executive.workspace.state import now_iso

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def add_entry(path: Path, title: str, lines: Sequence[str]) -> None:
    """Append one dated entry; never rewrites what is there (a person may be editing it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Titles and lines may quote a bundle or a worker: one line each, redacted, no headings.
    body = "\n".join(f"- {_line(line)}" for line in lines)
    with path.open("a") as handle:
        handle.write(f"\n## {now_iso()[:19]}Z · {_line(title)}\n\n{body}\n")


def _line(text: str) -> str:
    return " ".join(scrub(_CONTROL.sub(" ", text)).split())
