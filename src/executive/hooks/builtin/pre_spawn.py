"""Hook B: the reader's pack for the step about to run."""

from __future__ import annotations

from executive.hooks.context import PreSpawnContext
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.memory.read import (
    Pack,
    Reader,
    ReadRequest,
    ReadResult,
    files_of,
    for_step,
    render_pack,
    scope_names,
)
from executive.memory.store import MemoryRecord

# A memory reaches the pack when two passes agree on it (corroborated), or when its
# similarity to a question shows it is on topic; below this cosine a lone hit is noise.
PACK_MIN_SCORE = 0.25
# In a read of coding work (its memories name files) a memory is judged against the best the
# read found: among the reader's first few, about the files the reader ranked first, or
# nearly as similar as the best. Past that the pack stops, however much room is left: a card
# of an unrelated run costs a worker as many tokens as a related one (bench/experience.py).
CODE_FIRST = 3
CODE_BELOW_BEST = 0.25


def relevant(
    memory: MemoryRecord, result: ReadResult, rank: int = 0, best: float = 0.0, code: bool = False
) -> bool:
    """The relevance floor: what earns a place in the pack, if it fits. ``rank`` is the
    memory's place in the read, ``best`` the highest cosine the read found; ``code``: the
    read is of coding work (its memories name files), where every memory is judged so."""
    if memory.type == "principle":
        return True
    if code:
        return (
            rank < CODE_FIRST
            or memory.id in result.promoted
            or (memory.score or 0) >= best - CODE_BELOW_BEST
        )
    return memory.id in result.relevant or (memory.score or 0) >= PACK_MIN_SCORE


def one_card_a_run(ranked: list[MemoryRecord]) -> list[MemoryRecord]:
    """The best card of each past run (Hook C's episodic memory of it), and every other
    memory (a chat's episodes share their session's run id: each is its own)."""
    seen: set[str] = set()
    kept = []
    for memory in ranked:
        card = memory.type == "episodic" and memory.metadata.get("trigger") == "post-run"
        if card and memory.run_id:
            if memory.run_id in seen:
                continue
            seen.add(memory.run_id)
        kept.append(memory)
    return kept


async def build(reader: Reader, request: ReadRequest) -> tuple[Pack, ReadResult]:
    """The read and the pack, nothing else: what ``bench/retrieval.py``'s ``pack`` row runs."""
    result = await reader.read(request)
    # Principles are the rules that apply (the plan asks for them last, of the global scope):
    # they are in by right, not by similarity; ranking still decides whether they fit.
    best = max((m.score or 0.0 for m in result.memories), default=0.0)
    code = any(files_of(m) for m in result.memories)
    chosen = one_card_a_run(
        [m for n, m in enumerate(result.memories) if relevant(m, result, n, best, code)]
    )
    built = render_pack(
        chosen,
        questions=result.questions,
        consulted=f"{len(result.questions)} questions; scopes: {scope_names(request.scopes)}",
        below_floor=len(result.memories) - len(chosen),
    )
    return built, result


def request_for(ctx: PreSpawnContext) -> ReadRequest:
    """What Hook B asks of memory for this step (``bench/experience.py`` asks the same)."""
    item, step = ctx.work_item, ctx.current_step
    return for_step(
        title=item.title,
        slug=item.bundle_slug,
        app_id=item.app_id,
        step_number=step.number,
        step_title=step.title,
        vendor=ctx.vendor,
        description=item.description,
        retry_attempt=ctx.retry_attempt,
        last_error=ctx.last_error,
    )


async def run(ctx: PreSpawnContext, tools: HookTools) -> EngineOutput:
    built, result = await build(await tools.reader(), request_for(ctx))
    return EngineOutput(
        built.markdown,
        memory_pack=built.markdown,
        details={
            "entries": len(built.entries),
            "cut": built.cut,
            "tokens": built.tokens,
            "trace": result.trace(),
        },
    )
