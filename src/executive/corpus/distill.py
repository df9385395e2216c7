"""Hook E's distiller: a retrospective's lesson lines → typed memory payloads.

pattern → reflective, fact → semantic, steps → procedural; a proposed rule is skipped (a
person merges rules into the constitution). Shared by Hook E and backfill lane B.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from executive.memory.taxonomy import GLOBAL_APP, valid_app_id
from executive.workspace.retrospective import Lesson

# kind -> (type, confidence, category)
KINDS: dict[str, tuple[str, float, str]] = {
    "pattern": ("reflective", 0.8, "functional"),
    "fact": ("semantic", 0.85, "technical"),
    "steps": ("procedural", 0.75, "technical"),
}
SKIP_RULE = "a proposed rule: for a person to merge into constitution.md"


def unstamped(text: str, app_id: str, run_id: str, **metadata: Any) -> dict[str, Any]:
    """A payload as a lane or Hook E hands it to the harvester, which stamps the rest."""
    return {"text": text, "app_id": app_id, "run_id": run_id, "metadata": metadata}


@dataclass(frozen=True)
class Distilled:
    payload: dict[str, Any] | None  # None: skipped, with ``why``
    why: str = ""


def distill(lesson: Lesson, *, source: str, run_id: str, trigger: str = "post-retro") -> Distilled:
    if lesson.kind not in KINDS:
        return Distilled(
            None, SKIP_RULE if lesson.kind == "rule" else f"unknown kind {lesson.kind}"
        )
    kind, confidence, category = KINDS[lesson.kind]
    app_id = lesson.scope if valid_app_id(lesson.scope) else GLOBAL_APP
    return Distilled(
        unstamped(
            lesson.text,
            app_id,
            run_id,
            type=kind,
            category=category,
            importance="high" if lesson.kind == "pattern" else "medium",
            confidence=confidence,
            trigger=trigger,
            source=source,
            tags=["retrospective", lesson.kind],
        ),
    )
