"""Hook C: the post-run decision tree (0-3 writes).

1. One episodic memory for a non-trivial run.
2. A semantic memory when the run carries a signal for one: a step over twice its expected
   time, or a verifier's note.
3. A procedural memory when a retry turned a failure into a pass.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from executive.hooks.builtin.summary import harvest_summary
from executive.hooks.context import PostRunContext
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.memory.taxonomy import WorkerVendor
from executive.workspace.signals import root_signal

SLOW_FACTOR = 2.0
_NOTE_PREFIXES = ("note:", "warning:", "warn:")
_VENDORS = {v.value for v in WorkerVendor}


def _payload(ctx: PostRunContext, text: str, **meta: Any) -> dict[str, Any]:
    vendor = ctx.vendor if ctx.vendor in _VENDORS else None
    return {
        "text": text,
        "app_id": ctx.work_item.app_id,
        "run_id": ctx.harvest_run,
        "metadata": {
            "trigger": "post-run",
            "source": ctx.work_item.source
            or f"workspace/completed/{ctx.work_item.bundle_slug}/PROMPT.md",
            **({"worker_vendor": vendor} if vendor else {"actor": "executive"}),
            **meta,
        },
    }


def decide(ctx: PostRunContext) -> tuple[list[dict[str, Any]], list[str]]:
    """The payloads this run deserves, and notes on what was skipped and why."""
    item, step, report = ctx.work_item, ctx.current_step, ctx.validation_report
    if not report.verifiers and not ctx.output_changed:
        return [], ["trivial run (no verifiers, no output): nothing to remember"]
    day = (ctx.run_ended_at or datetime.now(UTC).isoformat())[:10]
    names = ", ".join(v.verifier for v in report.verifiers) or "none declared"
    tries = "first try" if ctx.attempts == 1 else f"attempt {ctx.attempts}"
    payloads = [
        _payload(
            ctx,
            f"On {day}, run {ctx.harvest_run} of bundle {item.bundle_slug} (“{item.title}”, step "
            f"{step.number} “{step.title}”) passed all verifiers ({names}) on {tries} in "
            f"{ctx.duration_seconds:.0f}s with the {ctx.vendor} worker"
            # The contract id is how the work ledger and retrospectives name the same run.
            + (f" (contract {ctx.contract_id})." if ctx.contract_id else "."),
            type="episodic",
            category="project",
            importance="medium" if ctx.attempts == 1 else "high",
            confidence=1.0,
            outcome="success",
            tags=[item.bundle_slug[:40], "post-run"],
        )
    ]
    expected = step.estimated_seconds
    if expected and ctx.duration_seconds > SLOW_FACTOR * expected:
        payloads.append(
            _payload(
                ctx,
                f"Step {step.number} “{step.title}” of bundle {item.bundle_slug} took "
                f"{ctx.duration_seconds:.0f}s in run {ctx.harvest_run}, over {SLOW_FACTOR:g} times its "
                f"expected {expected:.0f}s: budget more time for it.",
                type="semantic",
                category="technical",
                importance="medium",
                confidence=0.7,
                tags=["slow-step"],
            )
        )
    notes = [
        f"{v.verifier}: {v.message}"
        for v in report.verifiers
        if v.message.lower().startswith(_NOTE_PREFIXES)
    ]
    if notes and len(payloads) < 3:
        payloads.append(
            _payload(
                ctx,
                f"Verifier notes on bundle {item.bundle_slug} step {step.number} (run {ctx.harvest_run}): "
                + "; ".join(notes),
                type="semantic",
                category="technical",
                importance="low",
                confidence=0.7,
                tags=["verifier-note"],
            )
        )
    if ctx.attempts > 1 and len(payloads) < 3:
        signal = root_signal(ctx.prior_errors[-1]) if ctx.prior_errors else "an unrecorded error"
        payloads.append(
            _payload(
                ctx,
                f"When step {step.number} “{step.title}” of bundle {item.bundle_slug} fails with "
                f"“{signal}”, retry it: it passed on attempt {ctx.attempts} in run {ctx.harvest_run}.",
                type="procedural",
                category="technical",
                importance="medium",
                confidence=0.7,
                tags=["retry-passed"],
            )
        )
    return payloads, []


async def run(ctx: PostRunContext, tools: HookTools) -> EngineOutput:
    payloads, notes = decide(ctx)
    if payloads:
        await tools.add(payloads)
    text = harvest_summary("post-run", ctx.harvest_run, tools.summaries, notes)
    return EngineOutput(text, details={"planned": len(payloads)})
