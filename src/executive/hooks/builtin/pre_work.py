"""Hook A: what memory says about each queued bundle (:func:`advice`). Audit only: logged,
never obeyed."""

from __future__ import annotations

from executive.hooks.context import PreWorkContext, WorkItem
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.memory.read import ReadResult, cite, for_bundle, render_findings
from executive.memory.store import MemoryRecord

MAX_BUNDLES = 5  # each costs a read: bound the iteration's retrieval budget


def advice(item: WorkItem, memories: list[MemoryRecord]) -> tuple[str, list[MemoryRecord]]:
    own = [m for m in memories if m.app_id == item.app_id]
    patterns = [
        m
        for m in own
        if m.type == "reflective" and "failure-pattern" in (m.metadata.get("tags") or [])
    ]
    failures = [m for m in own if m.metadata.get("outcome") == "failure"]
    successes = [m for m in own if m.metadata.get("outcome") == "success"]
    if patterns:
        return "avoid", patterns
    if failures:
        return "proceed with caution", failures
    if successes:
        return "prefer", successes
    return "proceed with caution", []


async def run(ctx: PreWorkContext, tools: HookTools) -> EngineOutput:
    reader = await tools.reader()
    verdicts: dict[str, str] = {}
    lines: list[str] = []
    merged = ReadResult(memories=[])
    seen: dict[str, MemoryRecord] = {}
    for item in ctx.queued[:MAX_BUNDLES]:
        result = await reader.read(
            for_bundle(
                title=item.title,
                slug=item.bundle_slug,
                app_id=item.app_id,
                description=item.description,
            )
        )
        merged.hops += result.hops
        seen |= {m.id: m for m in result.memories}
        verdict, evidence = advice(item, result.memories)
        verdicts[item.bundle_slug] = verdict
        cited = ", ".join(cite(m) for m in evidence[:4]) or "no prior memory"
        lines.append(f"- {item.bundle_slug}: {verdict} ({cited})")
    merged.memories = list(seen.values())
    # In the queue's order (``verdicts`` keeps it): the first preferred, else the first not avoided.
    memory_pick = next((s for s in verdicts if verdicts[s] == "prefer"), None) or next(
        (s for s in verdicts if verdicts[s] != "avoid"), ctx.picked
    )
    body = [
        *lines,
        "",
        f"Memory would pick: {memory_pick or 'none'}. The executive picked: {ctx.picked or 'none'} "
        "(by priority and age; this synthesis is audit only).",
    ]
    caveats = []
    if len(ctx.queued) > MAX_BUNDLES:
        caveats.append(
            f"only the first {MAX_BUNDLES} of {len(ctx.queued)} queued bundles were consulted"
        )
    text = render_findings("work selection", merged, body, caveats)
    return EngineOutput(
        text,
        details={
            "verdicts": verdicts,
            "memory_pick": memory_pick,
            "picked": ctx.picked,
            "agrees": memory_pick == ctx.picked,
        },
    )
