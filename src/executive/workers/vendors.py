"""Worker vendors: how to invoke Claude Code headless, or any command."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

VENDORS = ("claude", "command")


def fill(template: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """``{prompt_file}``-style placeholders filled in each argument; nothing else expands."""
    argv = []
    for arg in template:
        for name, value in values.items():
            arg = arg.replace("{" + name + "}", value)
        argv.append(arg)
    return argv


def claude_argv(
    claude_bin: str, prompt: str, *, max_turns: int, model: str | None = None
) -> list[str]:
    """Claude Code, headless and non-interactive, streaming JSON events to its run log.

    Edits are accepted and only the coding tools are allowed: a headless run cannot ask a
    person, so anything else is refused rather than waited on.
    """
    argv = [
        claude_bin,
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--max-turns",
        str(max_turns),
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Bash Read Write Edit Glob Grep",
        "--no-session-persistence",
    ]
    if model:
        argv += ["--model", model]
    return argv
