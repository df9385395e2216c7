"""What the scripted model of :mod:`tests.messages_api` says, and what it reads back.

A script is a list of :class:`Turn`: the content blocks of one assistant message each
(:class:`Text`, or a :class:`ToolUse` for one of Claude Code's tools, made with :func:`bash`,
:func:`write` or :func:`edit`). A turn's ``check`` reads the ``tool_result`` blocks the CLI
sent back for the turn before (:func:`tool_results`), so a scripted run can assert that a
command failed before it "fixes" it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]


Block = Text | ToolUse


def bash(command: str, description: str = "Run a command") -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": description})


def write(file_path: str, content: str) -> ToolUse:
    """Claude Code's ``Write`` wants an absolute ``file_path``."""
    return ToolUse("Write", {"file_path": file_path, "content": content})


def edit(file_path: str, old_string: str, new_string: str) -> ToolUse:
    return ToolUse(
        "Edit", {"file_path": file_path, "old_string": old_string, "new_string": new_string}
    )


@dataclass(frozen=True)
class ToolResult:
    """One ``tool_result`` block of a request: what running a scripted tool call gave."""

    tool_use_id: str
    text: str
    is_error: bool


Check = Callable[[list[ToolResult]], None]


@dataclass(frozen=True)
class Turn:
    """One assistant message. ``check`` sees the tool results of the turn before (raise to
    fail the run). A ``hang`` turn is never answered (until the server closes): the run
    waits on the model there, to be killed at its time limit."""

    blocks: Sequence[Block] = ()
    check: Check | None = None
    hang: bool = False


def tool_results(body: dict[str, Any]) -> list[ToolResult]:
    """The ``tool_result`` blocks of the request's last user message."""
    messages = body.get("messages") or []
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    if not isinstance(content, list):
        return []
    return [
        ToolResult(
            b.get("tool_use_id", ""), _result_text(b.get("content")), bool(b.get("is_error"))
        )
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def request_texts(body: dict[str, Any]) -> Iterator[str]:
    """Every text a request body carries to the model: its system blocks, then its messages."""
    yield from _block_texts(body.get("system"))
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            yield from _block_texts(message.get("content"))


def _block_texts(content: object) -> Iterator[str]:
    """The texts of a string or a list of blocks (a ``tool_result`` holds blocks of its own)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    yield block["text"]
                yield from _block_texts(block.get("content"))
