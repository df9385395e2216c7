"""A scripted Claude Code CLI at the wire level, for the SDK's own ``query()`` to talk to.

``FakeClaude`` is an SDK ``Transport``. It reads what the SDK writes (the ``initialize``
control request, the prompt, control responses) and plays back the stream-json lines the
CLI prints: ``system/init``, assistant messages with ``tool_use`` blocks, user messages with
``tool_result`` blocks, and a ``result``. Permission goes over the control protocol as in the
CLI: for every tool call it first asks the ``PreToolUse`` hooks the SDK registered at
``initialize`` (``hook_callback``); unless a hook denied the call or an allow rule
(``allowed_tools``) approves it outright, it asks ``can_use_tool``. An approved call "runs":
its scripted output comes back as the tool result. A refused one comes back as an error
result carrying the reason, and never runs (``ran`` lists what ran). With ``execute=True`` an
approved command really runs in ``bash -c``, in the options' ``cwd`` and with the environment
the SDK would hand the CLI (``os.environ`` under ``options.env``), and its output (with an
``Exit code N`` line when it fails, as Claude Code reports it) is the tool result.

Everything above the transport is the SDK's real code: its ``Query`` (control protocol),
its message parser and its error handling (a non-zero exit after an error result becomes a
``ResultError``), so the engine sees exactly the objects it sees in production.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
from claude_agent_sdk import CLINotFoundError, ProcessError, Transport

from tests.hooks.claude_script import Call, Crash, Result, Step, Turn

MODEL = "claude-fake-1"
SESSION = "fake-session-0001"


class FakeClaude(Transport):
    def __init__(
        self,
        script: list[Step],
        *,
        honour_hooks: bool = True,
        missing: bool = False,
        execute: bool = False,
    ) -> None:
        self.script = script
        self.execute = execute
        self.honour_hooks = honour_hooks  # False: a CLI that ignores PreToolUse hooks
        self.missing = missing  # True: connect() fails as when the binary is absent
        self.options: Any = None
        self.prompt: str | None = None
        self.ran: list[str] = []
        self.outputs: list[str] = []  # what each command that ran printed
        self.refused: list[str] = []
        self.hook_answers: list[dict[str, Any]] = []
        self.permission_answers: list[dict[str, Any]] = []
        self.initialize: dict[str, Any] | None = None
        self.closed = False
        self.turns = 0
        self._ready = False
        self._init_seen = anyio.Event()
        self._prompt_seen = anyio.Event()
        self._stdin_closed = anyio.Event()
        self._answers: dict[str, dict[str, Any]] = {}
        self._answered: dict[str, anyio.Event] = {}
        self._ids = 0

    # The engine's transport factory: it hands us the options the SDK would turn into flags.
    def __call__(self, options: Any) -> FakeClaude:
        self.options = options
        return self

    # --- Transport ---------------------------------------------------------------------------
    async def connect(self) -> None:
        if self.missing:
            raise CLINotFoundError("Claude Code not found", "/nowhere/claude")
        self._ready = True

    def is_ready(self) -> bool:
        return self._ready

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            if not line.strip():
                continue
            message = json.loads(line)
            kind = message.get("type")
            if kind == "control_request" and message["request"]["subtype"] == "initialize":
                self.initialize = message
                self._init_seen.set()
            elif kind == "user":
                self.prompt = message["message"]["content"]
                self._prompt_seen.set()
            elif kind == "control_response":
                answer = message["response"]
                self._answers[answer["request_id"]] = answer
                self._answered[answer["request_id"]].set()

    async def end_input(self) -> None:
        self._stdin_closed.set()

    async def close(self) -> None:
        self.closed = True

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        return self._play()

    # --- the CLI's side ----------------------------------------------------------------------
    async def _play(self) -> AsyncIterator[dict[str, Any]]:
        await self._init_seen.wait()
        assert self.initialize is not None
        yield {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": self.initialize["request_id"],
                "response": {"commands": [], "models": [], "hook_on_failure_supported": True},
            },
        }
        await self._prompt_seen.wait()
        yield self._system_init()
        for step in self.script:
            if isinstance(step, Turn):
                async for frame in self._turn(step):
                    yield frame
            elif isinstance(step, Result):
                yield self._result(step)
                if step.exit_code:
                    raise ProcessError(
                        f"Command failed with exit code {step.exit_code}",
                        exit_code=step.exit_code,
                        stderr="Check stderr output for details",
                    )
                with anyio.fail_after(5):  # the SDK closes stdin once the run is over
                    await self._stdin_closed.wait()
                return
            elif isinstance(step, Crash):
                raise ProcessError(
                    f"Command failed with exit code {step.exit_code}",
                    exit_code=step.exit_code,
                    stderr="Check stderr output for details",
                )
            else:
                await anyio.sleep_forever()
        # The script ran out: stdout closes, exit code 0, and no result was printed.

    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}_{self._ids:04d}"

    async def _ask(self, request: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Yield a control request; the answer lands in ``self._answers`` under its id."""
        request_id = self._next_id("cli_req")
        self._answered[request_id] = anyio.Event()
        yield {"type": "control_request", "request_id": request_id, "request": request}
        with anyio.fail_after(5):
            await self._answered[request_id].wait()
        self._last_answer = self._answers[request_id]

    def _pre_tool_use_ids(self, tool: str) -> list[str]:
        assert self.initialize is not None
        config = (self.initialize["request"].get("hooks") or {}).get("PreToolUse") or []
        ids: list[str] = []
        for matcher in config:
            pattern = matcher.get("matcher")
            if pattern in (None, "", "*") or re.fullmatch(pattern, tool):
                ids += matcher["hookCallbackIds"]
        return ids

    async def _turn(self, turn: Turn) -> AsyncIterator[dict[str, Any]]:
        self.turns += 1
        blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
        uses = []
        for call in turn.calls:
            tool_use = {
                "type": "tool_use",
                "id": self._next_id("toolu"),
                "name": call.tool,
                "input": {"command": call.command, "description": "memory", **call.extra},
            }
            blocks.append(tool_use)
            uses.append((tool_use, call))
        frame: dict[str, Any] = {
            "type": "assistant",
            "message": {
                "id": self._next_id("msg"),
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": blocks,
                "stop_reason": "tool_use" if uses else "end_turn",
                "usage": {"input_tokens": 1200, "output_tokens": 80},
            },
            "parent_tool_use_id": None,
            "session_id": SESSION,
            "uuid": str(uuid.uuid4()),
        }
        if turn.error:
            frame["error"] = turn.error
        yield frame
        if not uses:
            return
        results = []
        for tool_use, call in uses:
            denial: str | None = None
            decided = False
            for callback_id in self._pre_tool_use_ids(call.tool) if self.honour_hooks else []:
                hook_input = {
                    "session_id": SESSION,
                    "transcript_path": "/tmp/fake-transcript.jsonl",
                    "cwd": str(self.options.cwd) if self.options else "",
                    "permission_mode": "default",
                    "hook_event_name": "PreToolUse",
                    "tool_name": call.tool,
                    "tool_input": tool_use["input"],
                    "tool_use_id": tool_use["id"],
                }
                request = {
                    "subtype": "hook_callback",
                    "callback_id": callback_id,
                    "input": hook_input,
                    "tool_use_id": tool_use["id"],
                }
                async for line in self._ask(request):
                    yield line
                answer = self._last_answer
                self.hook_answers.append({"command": call.command, **answer})
                if answer["subtype"] == "error":  # on_failure="block": a failed hook blocks
                    denial = f"PreToolUse hook failed: {answer.get('error')}"
                    break
                output = answer["response"].get("hookSpecificOutput") or {}
                if output.get("permissionDecision") == "deny":
                    denial = output.get("permissionDecisionReason", "denied by a hook")
                    break
            if denial is None and self.options and call.tool in self.options.allowed_tools:
                decided = True  # an allow rule approves before any prompt
            if denial is None and not decided:
                request = {
                    "subtype": "can_use_tool",
                    "tool_name": call.tool,
                    "input": tool_use["input"],
                    "permission_suggestions": [],
                    "tool_use_id": tool_use["id"],
                }
                async for line in self._ask(request):
                    yield line
                answer = self._last_answer
                self.permission_answers.append({"command": call.command, **answer})
                if answer["subtype"] == "error":
                    denial = f"permission check failed: {answer.get('error')}"
                elif answer["response"].get("behavior") != "allow":
                    denial = answer["response"].get("message") or "denied"
            if denial is None:
                self.ran.append(call.command)
                output, is_error = await self._run(call)
                self.outputs.append(output)
                results.append(_tool_result(tool_use["id"], output, is_error))
            else:
                self.refused.append(call.command)
                results.append(_tool_result(tool_use["id"], denial, True))
        yield {
            "type": "user",
            "message": {"role": "user", "content": results},
            "parent_tool_use_id": None,
            "session_id": SESSION,
            "uuid": str(uuid.uuid4()),
        }

    async def _run(self, call: Call) -> tuple[str, bool]:
        if not self.execute:
            return call.output, call.is_error
        done = await anyio.run_process(
            ["bash", "-c", call.command],
            cwd=self.options.cwd,
            env={**os.environ, **self.options.env},
            check=False,
        )
        text = (done.stdout + done.stderr).decode()
        if done.returncode:
            return f"Exit code {done.returncode}\n{text}", True
        return text, False

    def _system_init(self) -> dict[str, Any]:
        return {
            "type": "system",
            "subtype": "init",
            "session_id": SESSION,
            "model": MODEL,
            "tools": ["Bash"],
            "cwd": str(self.options.cwd) if self.options else "",
            "mcp_servers": [],
            "permissionMode": "default",
            "apiKeySource": "ANTHROPIC_API_KEY",
            "uuid": str(uuid.uuid4()),
        }

    def _result(self, step: Result) -> dict[str, Any]:
        frame: dict[str, Any] = {
            "type": "result",
            "subtype": step.subtype,
            "is_error": step.is_error,
            "duration_ms": 4321,
            "duration_api_ms": 3210,
            "num_turns": self.turns,
            "result": step.text,
            "session_id": SESSION,
            "total_cost_usd": 0.0123,
            "usage": {"input_tokens": 1200 * self.turns, "output_tokens": 80 * self.turns},
            "permission_denials": [],
            "terminal_reason": step.terminal_reason,
            "uuid": str(uuid.uuid4()),
        }
        if step.errors is not None:
            frame["errors"] = step.errors
        if step.api_error_status is not None:
            frame["api_error_status"] = step.api_error_status
        return frame


def _tool_result(tool_use_id: str, content: str, is_error: bool) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": content,
        "is_error": is_error,
    }
