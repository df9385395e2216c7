"""Hook E: each distinct lesson of a retrospective becomes one typed memory, if it is new.

pattern → reflective, fact → semantic, steps → procedural, rule → skipped (a rule is for a
person to merge into the constitution). Memory is checked first; the per-trigger budget
(8 for a weekly retrospective, 3 for a per-run one) caps the writes.
"""

from __future__ import annotations

from typing import Any

from executive.hooks.builtin.summary import harvest_summary
from executive.hooks.context import PostRetroContext
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.memory.store.base import Filter
from executive.memory.synthesis import cite
from executive.memory.taxonomy import GLOBAL_APP, valid_app_id
from executive.workspace.retrospective import parse_lessons

# kind -> (type, confidence, category)
_TYPES = {
    "pattern": ("reflective", 0.8, "functional"),
    "fact": ("semantic", 0.85, "technical"),
    "steps": ("procedural", 0.75, "technical"),
}
BUDGET = {"weekly": 8, "per-run": 3}
# A memory of the same type and scope this similar already says it (MiniLM cosine).
ALREADY_KNOWN = 0.9


async def run(ctx: PostRetroContext, tools: HookTools) -> EngineOutput:
    path = tools.memory.home.root / ctx.retro_path
    lessons = parse_lessons(path.read_text())
    view = await tools.view()
    budget = BUDGET[ctx.retro_type]
    payloads: list[dict[str, Any]] = []
    notes: list[str] = []
    for lesson in lessons:
        if lesson.kind == "rule":
            notes.append(
                f"skipped a proposed rule (for a person to merge into constitution.md): {lesson.text[:80]}"
            )
            continue
        kind, confidence, category = _TYPES[lesson.kind]
        app_id = lesson.scope if valid_app_id(lesson.scope) else GLOBAL_APP
        where = Filter(user_id=tools.user_id, app_ids=(app_id,), types=(kind,))
        nearest = await view.search(lesson.text, where, 1)
        if nearest and (nearest[0].score or 0) >= ALREADY_KNOWN:
            notes.append(f"already known as {cite(nearest[0])}: {lesson.text[:80]}")
            continue
        if len(payloads) >= budget:
            notes.append(f"over the {ctx.retro_type} budget of {budget}: {lesson.text[:80]}")
            continue
        payloads.append(
            {
                "text": lesson.text,
                "app_id": app_id,
                "run_id": ctx.harvest_run,
                "metadata": {
                    "type": kind,
                    "category": category,
                    "importance": "high" if lesson.kind == "pattern" else "medium",
                    "confidence": confidence,
                    "trigger": "post-retro",
                    "source": ctx.retro_path,
                    "tags": ["retrospective", lesson.kind],
                },
            }
        )
    if payloads:
        await tools.add(payloads)
    text = harvest_summary("post-retro", ctx.retro_path, tools.summaries, notes)
    return EngineOutput(text, details={"lessons": len(lessons), "planned": len(payloads)})
