"""The worker's ``CLAUDE.md``: rules, the constitution, the goal, then the memory pack.

Regenerated before every spawn. The pack goes at the ``{{MEMORY_PACK_SECTION}}`` slot as a
blank line, the pack and a newline, or nothing when Hook B is off or found nothing to say.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from executive.files import atomic_write

SLOT = "{{MEMORY_PACK_SECTION}}"
FILE_NAME = "CLAUDE.md"


def template() -> str:
    return (resources.files("executive.workers") / "templates" / "worker-CLAUDE.md").read_text()


def render(*, output_dir: Path, constitution: str, goal: str, pack: str | None) -> str:
    text = template()
    # Fill the trusted parts first; the pack (data from memory) goes in last, and once.
    for placeholder, value in (
        ("{{OUTPUT_DIR}}", str(output_dir)),
        ("{{CONSTITUTION}}", constitution.strip() or "_No constitution.md in the agent home._"),
        ("{{GOAL}}", goal.strip()),
    ):
        text = text.replace(placeholder, value)
    section = f"\n{pack.strip()}\n" if pack and pack.strip() else ""
    return text.replace(SLOT, section)


def write(output_dir: Path, text: str) -> Path:
    """Write it into the worker's folder; rewritten only when it changed."""
    path = output_dir / FILE_NAME
    if path.exists() and path.read_text() == text:
        return path
    atomic_write(path, text)
    return path
