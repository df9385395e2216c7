"""Worker vendors: how to invoke Claude Code headless, or any command."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

# Claude Code's own traffic besides the conversation (telemetry, update checks, a warm-up
# call) would be refused by the sandbox's egress proxy anyway, with a log line each time.
CLAUDE_DEFAULTS = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def paid(vendor: str) -> bool:
    """Whether a run of ``vendor`` is paid for: Claude Code's is (its CLI reports the cost),
    a command's is not (what it spends itself, the daemon cannot see)."""
    return vendor == "claude"


def defaults(vendor: str) -> dict[str, str]:
    """Variables a vendor's worker gets unless the operator passes their own."""
    return dict(CLAUDE_DEFAULTS) if vendor == "claude" else {}


def fill(template: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """``{prompt_file}``-style placeholders filled in each argument, in one pass: a value that
    holds a placeholder stays as it is, and nothing else expands."""
    return [_PLACEHOLDER.sub(lambda m: values.get(m[1], m[0]), arg) for arg in template]


def claude_argv(
    claude_bin: str,
    prompt: str,
    *,
    max_turns: int,
    model: str | None = None,
    max_budget_usd: float | None = None,
) -> list[str]:
    """Claude Code, headless and non-interactive, streaming JSON events to its run log.

    Edits are accepted and only the coding tools are allowed: a headless run cannot ask a
    person, so anything else is refused rather than waited on.
    """
    argv = [claude_bin, "-p", prompt, "--output-format", "stream-json", "--verbose"]
    argv += ["--max-turns", str(max_turns), "--permission-mode", "acceptEdits"]
    argv += ["--allowedTools", "Bash Read Write Edit Glob Grep", "--no-session-persistence"]
    if model:
        argv += ["--model", model]
    if max_budget_usd is not None:
        # The CLI stops the run once its cost passes this (EXECUTIVE_BUDGET_RUN_USD).
        argv += ["--max-budget-usd", f"{max_budget_usd:.6f}"]
    return argv
