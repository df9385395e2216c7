"""Hook B: the reader's pack for the step about to run."""

from __future__ import annotations

from executive.hooks.context import PreSpawnContext
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.memory.read import pack, plan
from executive.memory.read.reader import Reader, ReadRequest, ReadResult, scope_names
from executive.memory.store.base import MemoryRecord

# A memory reaches the pack when two passes agree on it (corroborated), or when its
# similarity to a question shows it is on topic; below this cosine a lone hit is noise.
PACK_MIN_SCORE = 0.25


def relevant(memory: MemoryRecord, result: ReadResult) -> bool:
    """The relevance floor: what earns a place in the pack, if it fits."""
    return (
        memory.id in result.relevant
        or (memory.score or 0) >= PACK_MIN_SCORE
        or memory.type == "principle"
    )


async def build(reader: Reader, request: ReadRequest) -> tuple[pack.Pack, ReadResult]:
    """The read and the pack, nothing else: what ``bench/retrieval.py``'s ``pack`` row runs."""
    result = await reader.read(request)
    # Principles are the rules that apply (the plan asks for them last, of the global scope):
    # they are in by right, not by similarity; ranking still decides whether they fit.
    chosen = [m for m in result.memories if relevant(m, result)]
    built = pack.render(
        chosen,
        questions=result.questions,
        consulted=f"{len(result.questions)} questions; scopes: {scope_names(request.scopes)}",
        below_floor=len(result.memories) - len(chosen),
    )
    return built, result


def request_for(ctx: PreSpawnContext) -> ReadRequest:
    """What Hook B asks of memory for this step (``bench/experience.py`` asks the same)."""
    item, step = ctx.work_item, ctx.current_step
    return plan.for_step(
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
