"""Each hook's code, bound to its declaration: the context it is told, and the built-in engine.
The declaration (:mod:`executive.hookspecs`) is data the settings read too, so it cannot hold
the hooks' code: this is the one place that adds it."""

from __future__ import annotations

from typing import Any

from executive.hooks.builtin import fail_diag, post_retro, post_run, pre_spawn, pre_work
from executive.hooks.context import (
    FailDiagContext,
    HookContext,
    PostRetroContext,
    PostRunContext,
    PreSpawnContext,
    PreWorkContext,
)
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.hookspecs import HookName, HookSpec

# What each hook is told, in the declaration's order (A to E).
CONTEXTS: dict[HookName, type[HookContext]] = {
    HookName.PRE_WORK: PreWorkContext,
    HookName.PRE_SPAWN: PreSpawnContext,
    HookName.POST_RUN: PostRunContext,
    HookName.FAIL_DIAG: FailDiagContext,
    HookName.POST_RETRO: PostRetroContext,
}


def parse_context(hook: HookName | str, data: dict[str, Any]) -> HookContext:
    """Validate a JSON context for ``hook`` (for ``executive hooks run``): ``ValueError`` for
    a name that is no hook, pydantic's ``ValidationError`` for bad data."""
    return CONTEXTS[HookName(hook)].model_validate(data)


class BuiltinEngine:
    """The built-in skill engine: every hook carried out by its function, chosen by what the
    hook is told (its context's type), so a reader follows each call from here."""

    name = "builtin"

    async def run(self, spec: HookSpec, context: HookContext, tools: HookTools) -> EngineOutput:
        match context:
            case PreWorkContext():
                return await pre_work.run(context, tools)
            case PreSpawnContext():
                return await pre_spawn.run(context, tools)
            case PostRunContext():
                return await post_run.run(context, tools)
            case FailDiagContext():
                return await fail_diag.run(context, tools)
            case PostRetroContext():
                return await post_retro.run(context, tools)
        raise TypeError(f"hook {spec.name.value}: no built-in code for {type(context).__name__}")
