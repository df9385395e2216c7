"""What a skill engine is: something that carries out a hook and says what it did."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from executive.hooks.context import HookContext
from executive.hooks.result import Writes
from executive.hooks.tools import HookTools
from executive.hookspecs import HookSpec


@dataclass
class EngineOutput:
    final_text: str
    memory_pack: str | None = None
    error: str | None = None
    # None: the runner counts writes from the harvests the tools made (built-in engine).
    writes: Writes | None = None
    details: dict[str, Any] = field(default_factory=dict)


class EngineUnavailable(RuntimeError):
    """The engine cannot run here (no CLI, no credentials): a reason, not a crash."""


class Engine(Protocol):
    name: str

    async def run(self, spec: HookSpec, context: HookContext, tools: HookTools) -> EngineOutput: ...
