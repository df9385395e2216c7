"""The five hooks: their names, flags, direction and the skill each one hands off to."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from executive.settings import HOOK_FLAGS


class HookName(StrEnum):
    PRE_WORK = "pre-work-selection"  # A
    PRE_SPAWN = "pre-spawn-pack"  # B
    POST_RUN = "post-run-harvest"  # C
    FAIL_DIAG = "failure-diagnosis"  # D
    POST_RETRO = "post-retro-harvest"  # E


@dataclass(frozen=True)
class HookSpec:
    name: HookName
    letter: str
    flag: str
    writes: bool  # may the hook write memory?
    downstream: str  # the skill it delegates to: memory-reader or memory-harvester

    @property
    def skill(self) -> str:
        return f"memory-hook-{self.name.value}"


SPECS: dict[HookName, HookSpec] = {
    HookName.PRE_WORK: HookSpec(
        HookName.PRE_WORK, "A", HOOK_FLAGS["pre-work-selection"], False, "memory-reader"
    ),
    HookName.PRE_SPAWN: HookSpec(
        HookName.PRE_SPAWN, "B", HOOK_FLAGS["pre-spawn-pack"], False, "memory-reader"
    ),
    HookName.POST_RUN: HookSpec(
        HookName.POST_RUN, "C", HOOK_FLAGS["post-run-harvest"], True, "memory-harvester"
    ),
    # D reads, and may write one reflective memory when a failure pattern repeats.
    HookName.FAIL_DIAG: HookSpec(
        HookName.FAIL_DIAG, "D", HOOK_FLAGS["failure-diagnosis"], True, "memory-reader"
    ),
    HookName.POST_RETRO: HookSpec(
        HookName.POST_RETRO, "E", HOOK_FLAGS["post-retro-harvest"], True, "memory-harvester"
    ),
}
