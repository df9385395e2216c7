"""``workspace/needs-you.md``: what the executive cannot do alone, for a person to act on."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from executive.workspace.state import now_iso


def add_entry(path: Path, title: str, lines: Sequence[str]) -> None:
    """Append one dated entry; never rewrites what is there (a person may be editing it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "\n".join(f"- {line}" for line in lines)
    with path.open("a") as handle:
        handle.write(f"\n## {now_iso()[:19]}Z · {title}\n\n{body}\n")
