"""The five memory hooks, declared once: one ``HookSpec`` per hook, A to E.

The settings' flag fields (:mod:`executive.config.flags`), the env template
(:mod:`executive.envfile`, :mod:`executive.workspace.scaffold`), the docs' hooks tables
(tests/test_hookspecs.py keeps them current), ``executive status`` and the hooks' code
(:mod:`executive.hooks.dispatch`) are made from it. No other module names a hook's flag.

It sits below the settings and the hooks, importing nothing of the project: the settings read
the flags and know no layer (an import contract), and the hooks read the settings.
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
    writes: bool  # may the hook write memory? (every hook reads it)
    downstream: str  # the skill it delegates to: memory-reader or memory-harvester
    summary: str  # what the env template and the configuration reference say it does
    fires: str  # when the loop calls it (the docs' hooks tables)
    does: str  # what it gives back or writes (docs/hooks.md's table)
    brief: str  # the same in a few words (the README's table)
    go_live: bool  # on in the original's go-live state (what a demo home starts with)

    @property
    def skill(self) -> str:
        """Its skill file, ``hooks/skills/<skill>.md``."""
        return f"memory-hook-{self.name.value}"

    @property
    def quotes_memory(self) -> bool:
        """Whether its answer quotes memory (a pack, a synthesis, a diagnosis): the reader's
        hooks, D included though it may write one memory. Such an answer is logged at debug."""
        return self.downstream == "memory-reader"

    @property
    def field(self) -> str:
        """The settings field its flag is read into: ``V3_MEM_HOOK_POST_RUN`` -> ``hook_post_run``."""
        return self.flag.removeprefix("V3_MEM_").lower()

    @property
    def description(self) -> str:
        """The flag's one line in the env template and the configuration reference."""
        return f"hook {self.letter}: {self.summary}"


# In the original's order (A to E), which `executive status` and the dashboard keep.
SPECS: dict[HookName, HookSpec] = {
    spec.name: spec
    for spec in (
        HookSpec(
            HookName.PRE_WORK,
            "A",
            "V3_MEM_HOOK_PRE_WORK",
            writes=False,
            downstream="memory-reader",
            summary="memory synthesis before work selection (read, audit only)",
            fires="before selection, only when work is queued",
            does=(
                "advice per bundle (prefer / avoid / proceed with caution); audit only, logged"
                " beside the executive's own pick"
            ),
            brief="advice per bundle; audit only",
            # Audit only, and it costs retrievals every iteration.
            go_live=False,
        ),
        HookSpec(
            HookName.PRE_SPAWN,
            "B",
            "V3_MEM_HOOK_PRE_SPAWN",
            writes=False,
            downstream="memory-reader",
            summary="memory pack appended to every worker's CLAUDE.md (read)",
            fires="before every spawn",
            does="the memory pack for the worker's `CLAUDE.md`",
            brief="the memory pack in the worker's `CLAUDE.md`",
            go_live=True,
        ),
        HookSpec(
            HookName.POST_RUN,
            "C",
            "V3_MEM_HOOK_POST_RUN",
            writes=True,
            downstream="memory-harvester",
            summary="harvest the outcome of a successful run (write)",
            fires="after a step passes",
            # The dash of "0 to 3 writes" below is the docs' en dash (a range), not a hyphen.
            does=(
                "from what the worker did ([the harvest](memory.md#what-a-run-leaves-in-memory)):"
                " one experience card (what the executive saw, what the worker reported), a"
                " lesson per failure→fix that the daemon's own observation bears out and that"
                " names project code or a project command, a semantic memory for a slow step or a"
                " verifier note (0–3 writes); marks older memories about a changed file"  # noqa: RUF001
                " possibly outdated"
            ),
            brief="what the worker did, as memories",
            go_live=True,
        ),
        HookSpec(
            HookName.FAIL_DIAG,
            "D",
            "V3_MEM_HOOK_FAIL_DIAG",
            # D reads, and may write one reflective memory when a failure pattern repeats.
            writes=True,
            downstream="memory-reader",
            summary="failure diagnosis from the third failure on (read, may write)",
            fires="from the third failure on",
            does=(
                "diagnosis from memory: what the failing attempts tried, what fixed this failure"
                " before, an escalation flag; one reflective memory when a root signal repeats"
            ),
            brief="a diagnosis from memory",
            go_live=True,
        ),
        HookSpec(
            HookName.POST_RETRO,
            "E",
            "V3_MEM_HOOK_POST_RETRO",
            writes=True,
            downstream="memory-harvester",
            summary="distil a retrospective into memories (write)",
            fires="after a retrospective",
            does=(
                "each new lesson → a typed memory (rules are skipped: people merge those), the"
                " fixes the period's runs showed among them"
            ),
            brief="its lessons, as typed memories",
            go_live=True,
        ),
    )
}

# The original's staged roll-out: C first (write only, lowest risk), E last. The env template
# lists the flags in this order, and says to turn them on in it.
ROLL_OUT: tuple[HookName, ...] = (
    HookName.POST_RUN,
    HookName.PRE_SPAWN,
    HookName.PRE_WORK,
    HookName.FAIL_DIAG,
    HookName.POST_RETRO,
)


def spec_of(name: HookName | str) -> HookSpec:
    """The spec of a hook given by name; ``ValueError`` for a name that is no hook."""
    return SPECS[HookName(name)]
