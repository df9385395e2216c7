"""What the scripted Claude Code CLI of :mod:`tests.hooks.claude_fake` plays: tool calls,
assistant turns, the result line, a crash or a hang.

Apart from the fake itself, which subclasses the SDK's ``Transport``: importing the SDK takes
~0.8 s, which a test process pays only when it builds a fake.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Call:
    """One tool call the model makes, and what running it prints."""

    command: str
    output: str = ""
    is_error: bool = False  # the command exited non-zero
    tool: str = "Bash"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Turn:
    """One assistant message: some text, tool calls, maybe an API error marker."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    error: str | None = None  # AssistantMessage.error, e.g. "authentication_failed"


@dataclass
class Result:
    """The result line. A non-zero ``exit_code`` makes the CLI exit with it afterwards."""

    text: str = ""
    subtype: str = "success"
    is_error: bool = False
    errors: list[str] | None = None
    api_error_status: int | None = None
    terminal_reason: str = "completed"
    exit_code: int = 0


@dataclass
class Crash:
    """The CLI dies: stdout ends and the process exits non-zero, with no result."""

    exit_code: int = 1


class Hang:
    """The CLI stops printing and never exits."""


Step = Turn | Result | Crash | Hang
