"""Hook E: each distinct lesson of a retrospective becomes one typed memory, if it is new.

pattern → reflective, fact → semantic, steps → procedural, rule → skipped (a rule is for a
person to merge into the constitution). Memory is checked first; ``BUDGET`` caps the writes.
"""

from __future__ import annotations

from typing import Any

from executive.corpus.distill import distill
from executive.hooks.builtin.summary import harvest_summary
from executive.hooks.context import PostRetroContext
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.memory.read import cite
from executive.memory.store import Filter
from executive.memory.taxonomy import MAX_FILES
from executive.workspace.retrospective import parse_lessons

BUDGET = {"weekly": 8, "per-run": 3}
# A memory of the same type and scope this similar already says it (MiniLM cosine).
ALREADY_KNOWN = 0.9


async def run(ctx: PostRetroContext, tools: HookTools) -> EngineOutput:
    path = tools.memory.home.root / ctx.retro_path
    lessons = parse_lessons(path.read_text())
    view = await tools.view()
    budget = BUDGET[ctx.retro_type]
    # The files the period's runs changed: a lesson that names one is about it.
    known = sorted({path for run in ctx.experiences for path in run.experience.changed})
    payloads: list[dict[str, Any]] = []
    notes: list[str] = []
    for lesson in lessons:
        distilled = distill(lesson, source=ctx.retro_path, run_id=ctx.harvest_run)
        if distilled.payload is None:
            notes.append(f"skipped ({distilled.why}): {lesson.text[:80]}")
            continue
        payload = distilled.payload
        files = [path for path in known if path in lesson.text][:MAX_FILES]
        if files:
            payload["metadata"]["files"] = files
        where = Filter(
            user_id=tools.user_id,
            app_ids=(payload["app_id"],),
            types=(payload["metadata"]["type"],),
        )
        nearest = await view.search(lesson.text, where, 1)
        if nearest and (nearest[0].score or 0) >= ALREADY_KNOWN:
            notes.append(f"already known as {cite(nearest[0])}: {lesson.text[:80]}")
            continue
        if len(payloads) >= budget:
            notes.append(f"over the {ctx.retro_type} budget of {budget}: {lesson.text[:80]}")
            continue
        payloads.append(payload)
    if payloads:
        await tools.add(payloads)
    text = harvest_summary("post-retro", ctx.retro_path, tools.summaries, notes)
    return EngineOutput(text, details={"lessons": len(lessons), "planned": len(payloads)})
