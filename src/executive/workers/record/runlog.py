"""A Claude Code worker's record, read as the steps it took, in order.

Two records carry the same Messages API blocks in different envelope lines (see the team's
worker-records notes):

* the stream-json our claude workers print (``--output-format stream-json --verbose``): a
  ``system``/``init`` line with the ``cwd``, ``assistant`` and ``user`` lines holding
  ``message.content`` blocks, and a closing ``result`` line (missing when the run was killed);
* the session transcript Claude Code keeps (JSONL): ``user``/``assistant`` lines with the same
  ``message`` objects plus ``cwd``, and ``summary`` or ``file-history-snapshot`` lines.

So one reader of blocks serves both. Every line is the worker's text: it is parsed only when
its size and nesting are bounded (:func:`executive.files.parse_json`), anything unexpected is
skipped and counted, and nothing here raises on what a log holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from executive.files import JsonLimitError, parse_json
from executive.spend import Spend, of_line

# A Write of a whole source file is one line; past this a line is skipped, not parsed.
MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_PROBLEMS = 5
# Claude Code reports a failed Bash call as "Exit code N" and then the output.
_EXIT = re.compile(r"\AExit code (-?\d+)\s*\n?")


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    id: str
    text: str
    is_error: bool
    exit_code: int | None  # a Bash result's status, when the result says it


@dataclass(frozen=True)
class Said:
    """A text block of the worker's own (an assistant message)."""

    text: str


Event = ToolCall | ToolResult | Said


@dataclass
class Reading:
    kind: Literal["stream-json", "transcript", "unknown"] = "unknown"
    events: list[Event] = field(default_factory=list)
    cwd: str | None = None
    task: str = ""  # the first user message's text: the task as it was given
    final: str | None = None  # the ``result`` line's text (stream-json), when the run ended
    finished: bool = False
    # The last ``result`` line's figures: that line is the CLI's own account of the run (a
    # program the worker ran may print one before it, never after the CLI's last).
    spend: Spend | None = None
    skipped: int = 0
    problems: list[str] = field(default_factory=list)

    def problem(self, number: int, what: str) -> None:
        self.skipped += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"line {number}: {what}")


def read_lines(lines: Iterable[bytes]) -> Reading:
    """Every line of a record, in order; a line that cannot be read is skipped and noted."""
    reading = Reading()
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE_BYTES:
            reading.problem(number, f"{len(raw):,} bytes, over the {MAX_LINE_BYTES:,} read")
            continue
        try:
            line = parse_json(raw, max_bytes=MAX_LINE_BYTES, max_depth=MAX_DEPTH)
        except JsonLimitError as exc:
            reading.problem(number, str(exc)[:120])
            continue
        if not isinstance(line, dict):
            reading.problem(number, "not a JSON object")
            continue
        _line(reading, line)
    return reading


def _line(reading: Reading, line: dict[str, Any]) -> None:
    kind = line.get("type")
    if kind == "system" and line.get("subtype") == "init":
        reading.kind = "stream-json"
        reading.cwd = _str(line.get("cwd")) or reading.cwd
    elif kind == "result":
        reading.kind = "stream-json"
        reading.finished = True
        reading.final = _str(line.get("result"))
        reading.spend = of_line(line)
    elif kind in ("user", "assistant"):
        if reading.kind == "unknown" and "sessionId" in line:
            reading.kind = "transcript"
        if reading.cwd is None:
            reading.cwd = _str(line.get("cwd"))
        message = line.get("message")
        if isinstance(message, dict):
            _message(reading, kind, message, line.get("toolUseResult", line.get("tool_use_result")))


def _message(reading: Reading, role: str, message: dict[str, Any], extra: Any) -> None:
    content = message.get("content")
    if isinstance(content, str):  # a plain prompt, as transcripts hold the task: one block
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, dict):
            _block(reading, role, block, extra)


def _block(reading: Reading, role: str, block: dict[str, Any], extra: Any) -> None:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        if role == "assistant":
            reading.events.append(Said(block["text"]))
        elif not reading.task:
            reading.task = block["text"]
    elif kind == "tool_use" and role == "assistant":
        tool_input = block.get("input")
        reading.events.append(
            ToolCall(
                _str(block.get("id")) or "",
                _str(block.get("name")) or "",
                tool_input if isinstance(tool_input, dict) else {},
            )
        )
    elif kind == "tool_result" and role == "user":
        text = _result_text(block.get("content"))
        match = _EXIT.match(text)
        interrupted = isinstance(extra, dict) and extra.get("interrupted") is True
        reading.events.append(
            ToolResult(
                _str(block.get("tool_use_id")) or "",
                text[match.end() :] if match else text,
                block.get("is_error") is True or interrupted,
                int(match.group(1)) if match else None,
            )
        )


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
