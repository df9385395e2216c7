"""Each hook's code, bound to its declaration: the context it is told and its built-in function.

The declaration (:mod:`executive.hookspecs`) is data the settings read too, so it cannot hold
the hooks' code; this is the one place that adds it. The runner's built-in engine dispatches
through :data:`HOOKS`, and ``executive hooks run`` reads a context with :func:`parse_context`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
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
from executive.hookspecs import SPECS, HookName, HookSpec

BuiltinRun = Callable[[Any, HookTools], Awaitable[EngineOutput]]


@dataclass(frozen=True)
class HookCode:
    spec: HookSpec
    context: type[HookContext]  # what the loop tells it; `executive hooks run` reads it as JSON
    builtin: BuiltinRun  # how the built-in engine carries it out (rules in code, no LLM)


# In the declaration's order (A to E).
HOOKS: dict[HookName, HookCode] = {
    code.spec.name: code
    for code in (
        HookCode(SPECS[HookName.PRE_WORK], PreWorkContext, pre_work.run),
        HookCode(SPECS[HookName.PRE_SPAWN], PreSpawnContext, pre_spawn.run),
        HookCode(SPECS[HookName.POST_RUN], PostRunContext, post_run.run),
        HookCode(SPECS[HookName.FAIL_DIAG], FailDiagContext, fail_diag.run),
        HookCode(SPECS[HookName.POST_RETRO], PostRetroContext, post_retro.run),
    )
}


def parse_context(hook: HookName | str, data: dict[str, Any]) -> HookContext:
    """Validate a JSON context for ``hook`` (for ``executive hooks run``).

    ``ValueError`` for a name that is no hook, pydantic's ``ValidationError`` for bad data.
    """
    return HOOKS[HookName(hook)].context.model_validate(data)


class BuiltinEngine:
    """The built-in skill engine: every hook carried out by its function in :data:`HOOKS`."""

    name = "builtin"

    async def run(self, spec: HookSpec, context: HookContext, tools: HookTools) -> EngineOutput:
        return await HOOKS[spec.name].builtin(context, tools)
