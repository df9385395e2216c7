"""The five hooks, defined once: name, letter, flag, direction and the skill each hands off to.

Everything else that names a hook (the runner's gate, ``executive status``, the dashboard, the
loop) reads it from here. The flag is the environment variable that switches the hook on;
settings declare that variable like any other and read it by name (``Settings.flag``), so
settings never need to know what a hook is.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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
    flag: str  # the environment variable that switches it on (the original's name)
    writes: bool  # may the hook write memory?
    downstream: str  # the skill it delegates to: memory-reader or memory-harvester

    @property
    def skill(self) -> str:
        return f"memory-hook-{self.name.value}"


# In the original's order (A to E), which `executive status` and the dashboard keep.
SPECS: dict[HookName, HookSpec] = {
    spec.name: spec
    for spec in (
        HookSpec(HookName.PRE_WORK, "A", "V3_MEM_HOOK_PRE_WORK", False, "memory-reader"),
        HookSpec(HookName.PRE_SPAWN, "B", "V3_MEM_HOOK_PRE_SPAWN", False, "memory-reader"),
        HookSpec(HookName.POST_RUN, "C", "V3_MEM_HOOK_POST_RUN", True, "memory-harvester"),
        # D reads, and may write one reflective memory when a failure pattern repeats.
        HookSpec(HookName.FAIL_DIAG, "D", "V3_MEM_HOOK_FAIL_DIAG", True, "memory-reader"),
        HookSpec(HookName.POST_RETRO, "E", "V3_MEM_HOOK_POST_RETRO", True, "memory-harvester"),
    )
}


def spec_of(name: HookName | str) -> HookSpec:
    """The spec of a hook given by name; ``ValueError`` for a name that is no hook."""
    return SPECS[HookName(name)]
