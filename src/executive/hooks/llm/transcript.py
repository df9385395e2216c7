"""What one agent run did, read off the SDK's message stream (imported only with the SDK).

Every tool-use block is recorded, in order, under the name the histogram shows: an allowed
``executive mem search`` is ``memory.search`` (as the built-in engine records it), anything
refused keeps its tool name (``Bash``). Each allowed ``mem add`` is matched with its tool
result, whose JSON (``{ok, total, succeeded, skipped, failed, results}``) gives the writes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from executive.hooks.llm.allow import AllowList, Verdict
from executive.hooks.result import Writes
from executive.logs import get_logger
from executive.redact import scrub

log = get_logger(__name__)

SHOWN_CHARS = 300  # of a refused command or a failed write's output, in details and logs


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


_ANSWER_KEYS = ("total", "rejections", "skipped")


def _answer(text: str) -> dict[str, Any] | None:
    """The JSON answer of ``executive mem add`` in a tool result: the first object with one of
    its keys (Bash may put an exit-code line first, and log lines, JSON too, around it)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict) and any(key in value for key in _ANSWER_KEYS):
            return value
        start = text.find("{", end)
    return None


class Transcript:
    def __init__(self, policy: AllowList, calls: list[str]) -> None:
        self.policy = policy
        self.calls = calls
        self.result: ResultMessage | None = None
        self.model: str | None = None
        self.last_text = ""
        self.assistant_error: str | None = None
        self.refused: dict[str, dict[str, str]] = {}
        self._pending_adds: dict[str, int] = {}  # tool_use_id -> payloads, awaiting a result
        self.adds = self.rejected = 0
        self.tally: Counter[str] = Counter()  # Writes' figures: attempted, succeeded, ...
        self.memory_off = False
        self.add_errors: list[str] = []

    # --- the stream ------------------------------------------------------------------------
    def feed(self, message: object) -> None:
        if isinstance(message, SystemMessage) and message.subtype == "init":
            self.model = message.data.get("model")
        elif isinstance(message, AssistantMessage):
            if message.error:
                self.assistant_error = message.error
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    self._tool_use(block)
                elif isinstance(block, TextBlock) and block.text.strip():
                    self.last_text = block.text
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock) and block.tool_use_id in self._pending_adds:
                    self._add_result(self._pending_adds.pop(block.tool_use_id), block)
        elif isinstance(message, ResultMessage):
            self.result = message

    def _tool_use(self, block: ToolUseBlock) -> None:
        verdict = self.policy.check(block.name, block.input)
        self.calls.append(verdict.label or block.name)
        if verdict.allowed and verdict.op == "add":
            self._pending_adds[block.id] = verdict.items
            self.adds += 1

    def _add_result(self, items: int, block: ToolResultBlock) -> None:
        text = _text(block.content)
        data = _answer(text)
        if isinstance(data, dict) and isinstance(data.get("total"), int):
            self.tally["attempted"] += data["total"]
            for key in ("succeeded", "skipped", "failed"):
                self.tally[key] += int(data.get(key, 0))
        elif isinstance(data, dict) and data.get("ok") and data.get("skipped"):
            self.memory_off = True  # the surface says memory is off: nothing was written
        elif isinstance(data, dict) and data.get("rejections"):
            self.rejected += items  # refused by validation before anything was sent
        else:  # no answer we can read: the write is not confirmed
            self._unconfirmed(items, scrub(text.strip()[:SHOWN_CHARS]))

    def _unconfirmed(self, items: int, why: str) -> None:
        self.tally.update(attempted=items, failed=items)
        self.add_errors.append(why)

    # --- the permission checks report here ------------------------------------------------
    def check(self, tool_use_id: str | None, tool: str, tool_input: Mapping[str, Any]) -> Verdict:
        """The allow-list's verdict on a call; a refusal is recorded once per call."""
        verdict = self.policy.check(tool, tool_input)
        key = tool_use_id or f"refused-{len(self.refused)}"
        if not verdict.allowed and key not in self.refused:
            command = scrub(str(tool_input.get("command", ""))[:SHOWN_CHARS])
            self.refused[key] = {"tool": tool, "command": command, "reason": verdict.reason}
            log.warning("hook.command_refused", tool=tool, command=command)
        return verdict

    # --- the outcome ----------------------------------------------------------------------
    def finish(self) -> None:
        """Adds that never got a result (the run ended first) are unconfirmed: failed."""
        for items in self._pending_adds.values():
            self._unconfirmed(items, "no result arrived for this add")
        self._pending_adds.clear()

    def writes(self) -> Writes:
        return Writes(**self.tally)

    def write_error(self) -> str | None:
        """Why a write hook's adds came to nothing, when they all did."""
        if not self.adds or any(self.tally[k] for k in ("succeeded", "skipped", "failed")):
            return None  # no adds, something landed, or the runner reports the failures
        if self.memory_off:
            return "`executive mem add` answered that memory is off: nothing was written"
        if self.rejected:
            n = self.rejected
            return (
                f"every memory add was rejected by validation ({n} payload{'s' * (n != 1)}): "
                "nothing was written"
            )
        return None
