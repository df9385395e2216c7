"""The LLM skill engine: each hook run is one Claude agent turn over ``executive mem``.

One ``query()`` per run: the rendered skill is the prompt, Bash the only tool; no MCP
servers and no settings files, so no allow rule, hook or CLAUDE.md from disk applies.

The allow-list (:mod:`executive.hooks.llm.allow`) is enforced twice, in code, before a
command runs: a ``PreToolUse`` hook sees every tool call and denies what the list refuses
(it runs first, whatever the permission rules say, and a failure of the hook blocks the
call), and the ``can_use_tool`` callback answers every call that reaches a permission
prompt the same way. Nothing is pre-approved: ``allowed_tools`` stays empty, because an
entry there would approve Bash before either check could refuse it.

The SDK is imported only when a run starts: without the ``claude`` extra the engine is
unavailable (a reason, and the runner's fallback), never an import error.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable, Mapping
from contextlib import aclosing
from typing import Any

from executive import __version__
from executive.hooks.context import HookContext
from executive.hooks.engine import EngineOutput, EngineUnavailable
from executive.hooks.llm import answer, preflight
from executive.hooks.llm.allow import AllowList
from executive.hooks.result import Writes
from executive.hooks.skills import render
from executive.hooks.tools import HookTools
from executive.hookspecs import HookName, HookSpec
from executive.redact import learn, scrub
from executive.spend import not_reported, of_result
from executive.untrusted import ending

MAX_TURNS = 30
# Results the CLI reports when the account, not the run, is the problem: cannot run here.
_ACCOUNT_ERRORS = ("authentication_failed", "billing_error")
_STDERR_LINES = 5


def mem_prefix(home: os.PathLike[str] | str) -> list[str]:
    """The memory CLI as the agent must spell it: ``python -m executive`` rather than the
    console script, the daemon's own interpreter and package, found without PATH or a venv."""
    return [sys.executable, "-m", "executive", "--home", str(home)]


class ClaudeEngine:
    name = "claude"

    def __init__(
        self,
        *,
        transport: Callable[[Any], Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        # ``transport`` builds an SDK Transport from the options (tests play a fake CLI
        # through it); without one the SDK starts the real CLI after the checks below.
        self._transport = transport
        self._environ = environ

    async def run(self, spec: HookSpec, context: HookContext, tools: HookTools) -> EngineOutput:
        try:
            import claude_agent_sdk as sdk
        except ImportError as exc:
            raise EngineUnavailable(preflight.SDK_MISSING) from exc
        from executive.hooks.llm.transcript import Transcript

        settings = tools.settings
        environ = os.environ if self._environ is None else self._environ
        cli: str | None = None
        if self._transport is None:
            ready = preflight.readiness(settings, environ)
            if ready.problem is not None:
                raise EngineUnavailable(ready.problem)
            cli = ready.cli
        secrets = settings.secret_values()
        learn(secrets=secrets)
        policy = AllowList(mem_prefix(settings.home), writes=spec.writes)
        prompt = scrub(render(spec.name, context, mem_command=policy.mem_command))
        transcript = Transcript(policy, tools.calls)
        can_use_tool, pre_tool_use = _gates(sdk, transcript)
        stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        options = sdk.ClaudeAgentOptions(
            tools=["Bash"],
            allowed_tools=[],
            permission_mode="default",
            can_use_tool=can_use_tool,
            hooks={
                "PreToolUse": [
                    sdk.HookMatcher(matcher=None, hooks=[pre_tool_use], on_failure="block")
                ]
            },
            max_turns=MAX_TURNS,
            model=settings.model or None,
            cwd=str(settings.home),
            mcp_servers={},
            strict_mcp_config=True,
            setting_sources=[],
            env=preflight.cli_env(environ, secrets),
            cli_path=cli,
            stderr=stderr.append,
            client_app=f"executive/{__version__}",
        )
        transport = self._transport(options) if self._transport is not None else None
        crash: str | None = None
        try:
            stream = sdk.query(prompt=prompt, options=options, transport=transport)
            async with aclosing(stream):
                async for message in stream:
                    transcript.feed(message)
        except sdk.CLINotFoundError as exc:
            raise EngineUnavailable(f"Claude Code CLI not found: {scrub(str(exc))}") from None
        except sdk.CLIConnectionError as exc:
            raise EngineUnavailable(f"cannot start Claude Code: {scrub(str(exc))}") from None
        except sdk.ProcessError as exc:  # a ResultError too: the CLI exits 1 after an error
            crash = _crash(exc, stderr)
        except Exception as exc:  # the SDK's own failures (bad JSON, a control time-out)
            crash = f"{type(exc).__name__}: {exc}"
        transcript.finish()
        return _output(spec, transcript, crash)


def _gates(sdk: Any, transcript: Any) -> tuple[Any, Any]:
    """The allow-list's two checks: the permission callback and the ``PreToolUse`` hook."""

    async def can_use_tool(name: str, tool_input: dict[str, Any], ctx: Any) -> Any:
        verdict = transcript.check(ctx.tool_use_id, name, tool_input)
        if verdict.allowed:
            return sdk.PermissionResultAllow()
        return sdk.PermissionResultDeny(message=verdict.reason)

    async def pre_tool_use(data: Any, tool_use_id: str | None, _ctx: Any) -> Any:
        name, tool_input = data.get("tool_name", ""), data.get("tool_input") or {}
        verdict = transcript.check(tool_use_id, name, tool_input)
        if verdict.allowed:
            return {}  # no opinion: the permission check (can_use_tool) decides
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": verdict.reason,
            }
        }

    return can_use_tool, pre_tool_use


def _crash(exc: Any, stderr: deque[str]) -> str:
    text = f"Claude Code exited with code {exc.exit_code}" if exc.exit_code else str(exc)
    lines = [line for line in stderr if line.strip()]
    return text + (f"; stderr: {' | '.join(lines)}" if lines else "")


def _result_error(result: Any) -> str | None:
    """Why a result message is not a success, or None when it is one."""
    if result.subtype == "success" and not result.is_error:
        return None
    reasons = [e for e in result.errors or [] if e.strip()] or [result.result or ""]
    reason = "; ".join(r.strip() for r in reasons if r.strip())
    if result.subtype == "success":  # an API failure ends as "success" with is_error
        status = f" (HTTP {result.api_error_status})" if result.api_error_status else ""
        return f"API error{status}: {reason or 'no detail'}"
    return f"{result.subtype}: {reason}" if reason else result.subtype


def _output(spec: HookSpec, transcript: Any, crash: str | None) -> EngineOutput:
    result = transcript.result
    error = (
        _result_error(result)
        if result is not None
        else crash or "the Claude stream ended without a result message"
    )
    if error is not None and transcript.assistant_error in _ACCOUNT_ERRORS:
        raise EngineUnavailable(
            f"Claude refused this account ({transcript.assistant_error}): "
            f"{scrub(transcript.last_text.strip()[:200]) or scrub(error)}"
        )
    final_text = scrub(result.result or "") if error is None and result is not None else ""
    # The CLI's own account of what the run cost (never 0 when it gave none).
    details: dict[str, Any] = {"model": transcript.model, "spend": not_reported()}
    if result is not None:
        paid = of_result(
            result.total_cost_usd, result.usage, result.num_turns, result.duration_api_ms
        )
        if paid is not None:
            details["spend"] = paid.record()
        if crash is not None:
            details["exit_error"] = scrub(crash)
        details |= {
            "stop": result.subtype,
            "turns": result.num_turns,
            "cost_usd": result.total_cost_usd,
            "api_ms": result.duration_api_ms,
        }
    if transcript.refused:
        details["refused"] = list(transcript.refused.values())
    pack: str | None = None
    if spec.name is HookName.PRE_SPAWN and (extracted := answer.extract(final_text)):
        capped = answer.cap(extracted)
        pack = capped.markdown
        details |= {"entries": capped.entries, "cut": capped.cut, "tokens": capped.tokens}
    writes = transcript.writes() if spec.writes else Writes()
    if spec.writes:
        if transcript.rejected:
            details["rejected"] = transcript.rejected
        if transcript.add_errors:
            details["add_errors"] = transcript.add_errors
        if error is None:
            error = transcript.write_error()
    if error is not None:
        details["last_text"] = scrub(ending(transcript.last_text, 400))
    return EngineOutput(
        final_text,
        memory_pack=pack,
        error=scrub(error) if error else None,
        writes=writes,
        details=details,
    )
