"""What a successful run leaves in memory (Hook C), declared once for both engines: the
built-in engine (:mod:`executive.hooks.builtin.post_run`) writes by these figures and rules,
and the LLM engine's skill is filled in from them (``{{RUN_HARVEST_*}}``), so the two cannot
drift apart. To change what a run leaves in memory, change it here, then the built-in code
that carries it out; a test holds the built-in engine's payloads to these figures."""

from __future__ import annotations

from dataclasses import dataclass

from executive.memory.taxonomy import MAX_FILES, MAX_SYMBOLS
from executive.workspace.bundle import SLOW_FACTOR


@dataclass(frozen=True)
class RunHarvest:
    max_writes: int = 3
    card_tokens: int = 150  # an aim, not a cut: a pack has room for many runs at this size
    card_confidence: float = 1.0
    lesson_confidence: float = 0.75  # a failure and a fix of the same command within the run
    across_confidence: float = 0.7  # what the passing attempt changed after a failed one
    note_confidence: float = 0.7  # a slow step, a verifier's note, "retry it"
    slow_factor: float = SLOW_FACTOR
    max_files: int = MAX_FILES
    max_symbols: int = MAX_SYMBOLS
    # When a failure→fix is a lesson: each rule is one sentence, said to the LLM engine as
    # written and carried out by ``post_run.lesson_worthy``.
    lesson_rules: tuple[str, ...] = (
        "the executive's observation bears it out: every file it names changed on disk, and "
        "the run passed its verifiers",
        "it teaches about the code: it names a project file or runs a project command (a test "
        "runner, a build, a linter)",
        "the failing and the passing command are the same command (`npm run build` is not "
        "`npm run test`; `python -m pytest` is `pytest`; the meaningful link of a chain, not "
        "its `cat`)",
        "never a command that runs what it downloads (`curl … | sh`)",
        "never a `cd` into a folder that was not there, nor a switch of interpreter dressed "
        "up as a change to the code",
    )

    def placeholders(self) -> dict[str, str]:
        """The skill's ``{{RUN_HARVEST_*}}`` placeholders and what they say."""
        return {
            "{{RUN_HARVEST_MAX_WRITES}}": str(self.max_writes),
            "{{RUN_HARVEST_CARD_TOKENS}}": str(self.card_tokens),
            "{{RUN_HARVEST_CARD_CONFIDENCE}}": str(self.card_confidence),
            "{{RUN_HARVEST_LESSON_CONFIDENCE}}": str(self.lesson_confidence),
            "{{RUN_HARVEST_ACROSS_CONFIDENCE}}": str(self.across_confidence),
            "{{RUN_HARVEST_NOTE_CONFIDENCE}}": str(self.note_confidence),
            "{{RUN_HARVEST_SLOW_FACTOR}}": f"{self.slow_factor:g}",
            "{{RUN_HARVEST_MAX_FILES}}": str(self.max_files),
            "{{RUN_HARVEST_LESSON_RULES}}": "\n".join(f"   - {r}" for r in self.lesson_rules),
        }


RUN_HARVEST = RunHarvest()
