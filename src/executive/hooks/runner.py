"""``run_memory_hook``: the one function that runs all five hooks. It never raises.

A hook runs only when ``V3_MEMORY_ENABLED`` and its own flag are both true; otherwise it
returns skipped with the reason and touches nothing (no store, no model). Every failure, a
time-out included, comes back as a value. Every run logs one ``hook.finished`` event (the
outcome, the tool-call histogram, the duration, the answer's tail: see :func:`_answer`) and
appends ``EXECUTIVE_SKILL_USED`` to the work ledger. A write hook whose writes failed is
``failed`` in both, never ``ok`` (the original's go-live bug).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio

from executive.hooks.context import HookContext
from executive.hooks.dispatch import BuiltinEngine
from executive.hooks.engine import Engine, EngineOutput, EngineUnavailable
from executive.hooks.llm.engine import ClaudeEngine  # imports the SDK only when it runs
from executive.hooks.result import HookResult, Writes
from executive.hooks.tools import HookTools
from executive.hookspecs import HookName, HookSpec, spec_of
from executive.logs import bound, get_logger
from executive.memory.runtime import MemoryRuntime
from executive.memory.write import HarvestSummary
from executive.observe import Observer
from executive.settings import Settings
from executive.workspace.ledger import WorkLedger
from executive.workspace.spending import Budget

log = get_logger(__name__)


class HookTimeout(Exception):
    """A hook ran past its time limit (EXECUTIVE_HOOK_TIMEOUT_SECONDS)."""


@dataclass
class HookEnv:
    """What a hook run may use. Engines beyond the built-in one are optional."""

    settings: Settings
    memory: MemoryRuntime
    work_ledger: WorkLedger | None = None
    engines: Mapping[str, Engine] = field(
        default_factory=lambda: {"builtin": BuiltinEngine(), "claude": ClaudeEngine()}
    )
    observer: Observer | None = None  # the dashboard's record of recent runs
    budget: Budget | None = None  # the day's cap: under its pause only the built-in engine runs


async def run_memory_hook(name: HookName | str, context: HookContext, env: HookEnv) -> HookResult:
    # A string is accepted for `executive hooks run` and tests; the loop passes a HookName.
    try:
        spec = spec_of(name)
    except ValueError:
        return HookResult(hook=str(name), ran=False, error=f"unknown hook {name!r}")
    with bound(hook=spec.name.value):
        reason = env.settings.hook_off(spec.flag)  # the settings say why it may not run
        if reason is not None:
            log.info("hook.skipped", reason=reason)
            result = HookResult(hook=spec.name.value, ran=False, skipped=True, reason=reason)
        else:
            result = await _run(spec, context, env)
            _report(result, env, _bundle(context))
        if env.observer is not None:
            env.observer.hook_finished(result, context)
        return result


async def _run(spec: HookSpec, context: HookContext, env: HookEnv) -> HookResult:
    started = time.monotonic()
    chosen = env.settings.skill_engine
    engine = env.engines.get(chosen)
    details: dict[str, object] = {}
    if engine is None:
        details["fallback_from"] = chosen
        details["fallback_reason"] = f"the {chosen} engine is not installed"
        engine = env.engines["builtin"]
    pause = env.budget.paused() if env.budget is not None and engine.name != "builtin" else None
    if pause is not None:
        # A paid engine under the day's pause: the built-in one, which costs nothing.
        log.info("hook.budget_paused", engine=engine.name, until=pause.until.isoformat())
        details |= {"fallback_from": engine.name, "fallback_reason": pause.describe()}
        engine = env.engines["builtin"]
    calls: list[str] = []
    while True:  # at most twice: the chosen engine, then (if it cannot run here) the built-in
        tools = HookTools(env.memory, spec, calls)
        try:
            output = await _attempt(engine, spec, context, tools, env.settings.hook_timeout_seconds)
            break
        except EngineUnavailable as exc:
            if engine.name == "builtin" or not env.settings.skill_engine_fallback:
                why = f"{engine.name} engine unavailable: {exc}"
                return _failed(spec, engine.name, calls, started, why)
            log.warning("hook.engine_fallback", engine=engine.name, reason=str(exc))
            details |= {"fallback_from": engine.name, "fallback_reason": str(exc)}
            engine = env.engines["builtin"]
        except Exception as exc:
            log.exception("hook.raised", engine=engine.name, error=repr(exc))
            why = str(exc) if isinstance(exc, HookTimeout) else f"{type(exc).__name__}: {exc}"
            return _failed(spec, engine.name, calls, started, why)
    writes = output.writes if output.writes is not None else _count_writes(tools)
    error = output.error
    if error is None and writes.failed:
        error = f"{writes.failed} of {writes.attempted} writes were not confirmed"
    return HookResult(
        hook=spec.name.value,
        ran=True,
        final_text=output.final_text,
        memory_pack=output.memory_pack,
        tool_calls=calls,
        writes=writes,
        duration_ms=round((time.monotonic() - started) * 1000),
        error=error,
        engine=engine.name,
        details={**details, **output.details},
    )


async def _attempt(
    engine: Engine, spec: HookSpec, context: HookContext, tools: HookTools, limit: float
) -> EngineOutput:
    try:
        with anyio.fail_after(limit):
            return await engine.run(spec, context, tools)
    except TimeoutError:
        raise HookTimeout(f"timed out after {limit:g}s") from None


def _count_writes(tools: HookTools) -> Writes:
    done = HarvestSummary([r for s in tools.summaries for r in s.results])
    return Writes(
        attempted=len(done.results),
        succeeded=done.succeeded,
        skipped=done.skipped,
        failed=done.failed,
    )


def _failed(
    spec: HookSpec, engine: str, calls: list[str], started: float, error: str
) -> HookResult:
    return HookResult(
        hook=spec.name.value,
        ran=True,
        tool_calls=calls,
        duration_ms=round((time.monotonic() - started) * 1000),
        error=error,
        engine=engine,
    )


def _answer(result: HookResult) -> dict[str, object]:
    """The answer's tail, or what stands for it. A harvesting hook (C, E) answers with its
    harvest summary (ids, types, statuses): its tail is logged. A reading hook's answer quotes
    memory (A's synthesis, B's pack, D's diagnosis, though D may also write): the info line
    carries its size and a hash, and its tail goes to a debug line, so a log shipped off the
    host holds no memory text and no line weighs a pack."""
    if not spec_of(result.hook).quotes_memory:
        return {"tail": result.tail}
    digest = hashlib.sha256(result.final_text.encode("utf-8", "replace")).hexdigest()[:16]
    log.debug("hook.answer", tail=result.tail)
    return {"answer_chars": len(result.final_text), "answer_sha256": digest}


def _bundle(context: HookContext) -> str | None:
    """The bundle a hook ran for (B, C and D run for one), so its spend counts to it."""
    item = getattr(context, "work_item", None)
    slug = getattr(item, "bundle_slug", None)
    return slug if isinstance(slug, str) and slug else None


def _report(result: HookResult, env: HookEnv, bundle: str | None = None) -> None:
    facts = {
        "outcome": result.outcome,
        "engine": result.engine,
        "tools": result.histogram,
        "duration_ms": result.duration_ms,
        "writes": result.writes.model_dump(),
        "error": result.error,
    }
    fields = facts | _answer(result)
    spent = result.details.get("spend") if result.engine != "builtin" else None
    paid: dict[str, object] = {}
    if isinstance(spent, dict):  # a paid engine ran: its spend, as the CLI reported it
        fields["cost_usd"] = spent.get("cost_usd")
        paid = {"spend": spent, "bundle": bundle}
    if "fallback_from" in result.details:
        fields["fallback_from"] = result.details["fallback_from"]
    (log.warning if result.outcome == "failed" else log.info)("hook.finished", **fields)
    if env.work_ledger is None:
        return
    try:
        usage = f"memory-hook/{result.hook}"
        env.work_ledger.append(
            "EXECUTIVE_SKILL_USED", usage_context=usage, hook=result.hook, **facts, **paid
        )
    except OSError as exc:
        log.error("ledger.write_failed", ledger=str(env.work_ledger.path), error=str(exc))
