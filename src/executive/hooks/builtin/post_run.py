"""Hook C: the post-run decision tree (0-3 writes), from what the worker did.

1. One episodic memory for a non-trivial run: what was done and where (the worker's own
   account, the files it created or changed, its tests), about those files.
2. A procedural memory for each failure→fix the run shows: a command that failed, then the
   change and the command that made it pass (within the run), or what the passing attempt
   changed after an earlier one failed (across attempts). Said without run ids, so the same
   lesson from another run is the same memory.
3. A semantic memory when the run carries a signal for one: a step over twice its expected
   time, or a verifier's note; and "retry it" when a retry passed without changing anything.

Then the memories of the project about a file this run changed are marked possibly outdated.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from executive.hooks.builtin.summary import harvest_summary, payload
from executive.hooks.context import PostRunContext
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.memory.taxonomy import MAX_FILES
from executive.untrusted import clip
from executive.workers.experience import ACROSS, Experience, Fix, fix_across, listed
from executive.workspace.bundle import SLOW_FACTOR
from executive.workspace.signals import root_signal, signal_tag

MAX_WRITES = 3
ACCOUNT_CHARS = 400
_MARKUP = re.compile(r"^\s*(?:#{1,6}|[-*+]|\d+[.)])\s+|\*\*|`{3,}\w*")
_ENDS = (".", ":", "!", "?", ";")
_NOTE_PREFIXES = ("note:", "warning:", "warn:")


def _payload(ctx: PostRunContext, text: str, **meta: Any) -> dict[str, Any]:
    item = ctx.work_item
    source = item.source or f"workspace/completed/{item.bundle_slug}/PROMPT.md"
    return payload(ctx, text, trigger="post-run", source=source, **meta)


def _flat(text: str) -> str:
    """Markdown as one line of prose: headings, bullets and bold marks gone, and a line that
    did not end a sentence ended, so "## Done" and its next line do not run together."""
    lines = [_MARKUP.sub("", line).strip() for line in text.splitlines()]
    return " ".join(x if x.endswith(_ENDS) else x + "." for x in lines if x)


def _what_was_done(experience: Experience | None) -> str:
    if experience is None or experience.empty:
        return ""
    parts = []
    for change, verb in (("created", "created"), ("modified", "changed"), ("deleted", "deleted")):
        paths = [f.path for f in experience.files if f.change == change]
        if paths:
            parts.append(f"{verb} {listed(paths)}")
    said = " It " + "; ".join(parts) + "." if parts else ""
    tests = [t for t in experience.tests if t.passed][-1:]
    said += "".join(
        f" Tests: `{t.command}`" + (f" ({t.counts})." if t.counts else ".") for t in tests
    )
    # A claude worker's closing account, in one line (its headings and bold are noise in a
    # memory). A command's output is not an account: it may echo anything, the pack included.
    account = _flat(experience.summary)
    if account and experience.source != "command":
        said += f" The worker's account: “{clip(account, ACCOUNT_CHARS)}”"
    return said


def _step(ctx: PostRunContext, lead: str = "") -> str:
    """``step 2 “Add the stylesheet”``; nothing when the step is the whole goal (its title is
    the bundle's: saying it twice costs a pack's tokens and tells nothing)."""
    step = ctx.current_step
    if step.title.strip() == ctx.work_item.title.strip():
        return ""
    return f"{lead}step {step.number} “{step.title}”"


def episode(ctx: PostRunContext) -> dict[str, Any]:
    item, report = ctx.work_item, ctx.validation_report
    day = (ctx.run_ended_at or datetime.now(UTC).isoformat())[:10]
    names = ", ".join(v.verifier for v in report.verifiers) or "none declared"
    tries = "first try" if ctx.attempts == 1 else f"attempt {ctx.attempts}"
    files = ctx.experience.changed[:MAX_FILES] if ctx.experience else []
    return _payload(
        ctx,
        f"On {day}, run {ctx.harvest_run} of bundle {item.bundle_slug} (“{item.title}”"
        f"{_step(ctx, ', ')}) passed all verifiers ({names}) on {tries} in "
        f"{ctx.duration_seconds:.0f}s with the {ctx.vendor} worker"
        # The contract id is how the work ledger and retrospectives name the same run.
        + (f" (contract {ctx.contract_id})." if ctx.contract_id else ".")
        + _what_was_done(ctx.experience),
        type="episodic",
        category="project",
        importance="medium" if ctx.attempts == 1 else "high",
        confidence=1.0,
        outcome="success",
        tags=[item.bundle_slug[:40], "post-run"],
        files=files or None,
    )


def _across(ctx: PostRunContext) -> Fix | None:
    """What the passing attempt changed after the last one failed (None: nothing changed)."""
    if ctx.attempts == 1 or not ctx.prior_errors:
        return None
    return fix_across(ctx.prior_errors[-1], ctx.experience)


def fixes(ctx: PostRunContext) -> list[dict[str, Any]]:
    """A procedural memory for each failure→fix: within the run first, then across attempts."""
    found = list(reversed(ctx.experience.fixes)) if ctx.experience else []
    if (across := _across(ctx)) is not None:
        found.append(across)
    step = _step(ctx)
    where = f"bundle {ctx.work_item.bundle_slug}" + (f" ({step})" if step else "")
    return [
        _payload(
            ctx,
            fix.lesson(where),
            type="procedural",
            category="technical",
            importance="medium",
            confidence=0.7 if fix.failed == ACROSS else 0.75,
            tags=["fix", signal_tag(root_signal(fix.error or "no error output"))],
            files=fix.files[:MAX_FILES] or None,
        )
        for fix in found
    ]


def signals(ctx: PostRunContext) -> list[dict[str, Any]]:
    """Semantic notes (a slow step, a verifier's note) and "retry it" when a plain retry passed."""
    item, step, report = ctx.work_item, ctx.current_step, ctx.validation_report
    found: list[tuple[str, str, str, str]] = []  # text, type, importance, tag
    expected = step.estimated_seconds
    if expected and ctx.duration_seconds > SLOW_FACTOR * expected:
        slow = (
            f"Step {step.number} “{step.title}” of bundle {item.bundle_slug} took "
            f"{ctx.duration_seconds:.0f}s in run {ctx.harvest_run}, over {SLOW_FACTOR:g} times its "
            f"expected {expected:.0f}s: budget more time for it."
        )
        found.append((slow, "semantic", "medium", "slow-step"))
    notes = [
        f"{v.verifier}: {v.message}"
        for v in report.verifiers
        if v.message.lower().startswith(_NOTE_PREFIXES)
    ]
    if notes:
        noted = (
            f"Verifier notes on bundle {item.bundle_slug} step {step.number} (run {ctx.harvest_run}): "
            + "; ".join(notes)
        )
        found.append((noted, "semantic", "low", "verifier-note"))
    if ctx.attempts > 1 and _across(ctx) is None:
        signal = root_signal(ctx.prior_errors[-1]) if ctx.prior_errors else "an unrecorded error"
        retry = (
            f"When step {step.number} “{step.title}” of bundle {item.bundle_slug} fails with "
            f"“{signal}”, retry it: it passed on attempt {ctx.attempts} in run {ctx.harvest_run}."
        )
        found.append((retry, "procedural", "medium", "retry-passed"))
    return [
        _payload(
            ctx,
            text,
            type=kind,
            category="technical",
            importance=weight,
            confidence=0.7,
            tags=[tag],
        )
        for text, kind, weight, tag in found
    ]


def decide(ctx: PostRunContext) -> tuple[list[dict[str, Any]], list[str]]:
    """The payloads this run deserves, and notes on what was skipped and why."""
    if not ctx.validation_report.verifiers and not ctx.output_changed:
        return [], ["trivial run (no verifiers, no output): nothing to remember"]
    planned = [episode(ctx), *fixes(ctx), *signals(ctx)]
    notes = [f"over the {MAX_WRITES}-write limit: {p['text'][:80]}" for p in planned[MAX_WRITES:]]
    return planned[:MAX_WRITES], notes


async def run(ctx: PostRunContext, tools: HookTools) -> EngineOutput:
    payloads, notes = decide(ctx)
    if payloads:
        await tools.add(payloads)
    changed = ctx.experience.changed if ctx.experience else []
    marked = await tools.mark_outdated(ctx.work_item.app_id, changed, ctx.harvest_run)
    if marked:
        notes.append(f"marked {marked} earlier memories possibly outdated (their files changed)")
    text = harvest_summary("post-run", ctx.harvest_run, tools.summaries, notes)
    return EngineOutput(text, details={"planned": len(payloads), "outdated": marked})
