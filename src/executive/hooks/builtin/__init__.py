"""The built-in skill engine: every hook carried out by rules in code, no LLM needed.

It follows the same skill files as the LLM engine, one small module per hook.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from executive.hooks.builtin import fail_diag, post_retro, post_run, pre_spawn, pre_work
from executive.hooks.context import HookContext
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.hookspecs import HookName, HookSpec

_HOOKS: dict[HookName, Callable[[Any, HookTools], Awaitable[EngineOutput]]] = {
    HookName.PRE_WORK: pre_work.run,
    HookName.PRE_SPAWN: pre_spawn.run,
    HookName.POST_RUN: post_run.run,
    HookName.FAIL_DIAG: fail_diag.run,
    HookName.POST_RETRO: post_retro.run,
}


class BuiltinEngine:
    name = "builtin"

    async def run(self, spec: HookSpec, context: HookContext, tools: HookTools) -> EngineOutput:
        return await _HOOKS[spec.name](context, tools)
