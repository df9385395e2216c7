"""Hook D: diagnose a repeated failure from memory; one reflective memory when it recurs.

Writes only when at least two *earlier* failures share this failure's root signal, and only
once per bundle and signal (the pattern carries a ``sig-<hash>`` tag). Escalates when the
pattern was already on record (it came back) or the retries are nearly spent.
"""

from __future__ import annotations

from executive.hooks.builtin.summary import harvest_summary, payload
from executive.hooks.context import FailDiagContext, PriorAttempt
from executive.hooks.engine import EngineOutput
from executive.hooks.tools import HookTools
from executive.memory.read import (
    ReadRequest,
    ReadResult,
    bullet,
    cite,
    for_failure,
    render_findings,
)
from executive.memory.store import Filter, MemoryRecord
from executive.memory.taxonomy import GLOBAL_APP, MAX_FILES
from executive.workers.record import Experience, error_line, listed
from executive.workspace.signals import root_signal, signal_tag

SAME_SIGNAL_BEFORE = 2
FIX_CHARS = 600
MAX_TRIED = 5  # attempts shown in "what the failing attempts tried", the latest
NEAR_LIMIT = 2  # escalate when this few attempts remain


def attempt_line(label: str, experience: Experience | None, error: str) -> str:
    """One attempt as its record shows it: the files it changed, the commands that failed."""
    if experience is None or experience.empty:
        return f"- {label}: no record of what it did; it failed with “{error_line(error) or 'no output'}”."
    parts = []
    if experience.changed:
        parts.append(f"changed {listed(experience.changed)}")
    for command in [c for c in experience.commands if c.failed][-2:]:
        parts.append(
            f"ran `{command.command}`, which failed"
            + (f" with “{command.error}”" if command.error else "")
        )
    if not parts:
        parts.append("ran nothing that failed; the verifiers refused its result")
    return f"- {label}: " + "; ".join(parts) + "."


def tried(ctx: FailDiagContext) -> list[str]:
    """What the failing attempts tried, earliest first, from their records."""
    lines = [
        attempt_line(f"attempt {p.attempt}", p.experience, p.error)
        for p in ctx.prior_attempts[-(MAX_TRIED - 1) :]
    ]
    lines.append(
        attempt_line(
            f"attempt {ctx.failure_signals.attempts} (this one)",
            ctx.experience,
            ctx.failure_signals.last_error,
        )
    )
    return ["", "What the failing attempts tried:", *lines]


def tried_files(ctx: FailDiagContext) -> list[str]:
    """The files the failing attempts changed: what the pattern is about."""
    records = [p.experience for p in ctx.prior_attempts] + [ctx.experience]
    paths = [path for e in records if e is not None for path in e.changed]
    return list(dict.fromkeys(paths))[:MAX_FILES]


async def run(ctx: FailDiagContext, tools: HookTools) -> EngineOutput:
    failure = ctx.failure_signals
    signal = failure.signal or root_signal(failure.last_error)
    tag = signal_tag(signal)
    result = await (await tools.reader()).read(_request(ctx, signal))
    recorded, fixed_before = await _on_record(ctx, tools, tag)
    same = [p for p in ctx.prior_attempts if (p.signal or root_signal(p.error)) == signal]
    escalate = bool(recorded) or failure.attempts >= ctx.max_retries - NEAR_LIMIT
    written_note = None
    if len(same) >= SAME_SIGNAL_BEFORE and not recorded:
        written_note = await _remember_pattern(ctx, tools, signal, tag, same)
    body = _diagnosis(ctx, signal, same, recorded)
    body += tried(ctx)
    body += _advice(fixed_before, result)
    body += _strategy(escalate, same)
    text = render_findings("failure diagnosis", result, body)
    if written_note is not None:
        text += "\n" + written_note
    return EngineOutput(
        text,
        details={
            "escalate": escalate,
            "signal": signal,
            "same_signal": len(same),
            "trace": result.trace(),
        },
    )


def _request(ctx: FailDiagContext, signal: str) -> ReadRequest:
    item, failure = ctx.work_item, ctx.failure_signals
    return for_failure(
        title=item.title,
        slug=item.bundle_slug,
        app_id=item.app_id,
        step_title=ctx.current_step.title,
        vendor=ctx.vendor,
        attempts=failure.attempts,
        last_error=failure.last_error,
        signal=signal,
    )


async def _on_record(
    ctx: FailDiagContext, tools: HookTools, tag: str
) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
    """The pattern memory already holds for this signal, and what fixed it before."""
    app_id, user_id = ctx.work_item.app_id, tools.user_id
    view = await tools.view()

    def tagged(kind: str, *app_ids: str) -> Filter:
        return Filter(user_id=user_id, app_ids=app_ids, types=(kind,), metadata=(("tags", tag),))

    recorded = await view.list(tagged("reflective", app_id))
    # What fixed this failure before (Hook C tags each failure→fix with its signal).
    return recorded, await view.list(tagged("procedural", app_id, GLOBAL_APP))


async def _remember_pattern(
    ctx: FailDiagContext, tools: HookTools, signal: str, tag: str, same: list[PriorAttempt]
) -> str:
    """Write the failure pattern as one reflective memory; the harvest's summary line."""
    item, failure = ctx.work_item, ctx.failure_signals
    runs = [p.run_id for p in same]
    text = (
        f"Bundle {item.bundle_slug} keeps failing at step {ctx.current_step.number} "
        f"“{ctx.current_step.title}” with the same root signal “{signal}”: runs "
        f"{', '.join(runs)} and attempt {failure.attempts} ({len(same) + 1} failures). "
        "Treat it as a known failure mode: fix its cause rather than retrying."
    )
    pattern = payload(
        ctx,
        text,
        trigger="failure-diagnosis",
        source="ledgers/work-ledger.jsonl",
        type="reflective",
        category="technical",
        importance="high",
        confidence=0.8,
        outcome="failure",
        tags=["failure-pattern", tag],
        files=tried_files(ctx) or None,
    )
    await tools.add([pattern])
    return harvest_summary("failure-diagnosis", ctx.harvest_run, tools.summaries)


def _diagnosis(
    ctx: FailDiagContext,
    signal: str,
    same: list[PriorAttempt],
    recorded: list[MemoryRecord],
) -> list[str]:
    """Which failure this is, how often it came before, and whether memory knew it."""
    item, failure = ctx.work_item, ctx.failure_signals
    body = [
        f"Failure of bundle {item.bundle_slug} at step {ctx.current_step.number}, attempt "
        f"{failure.attempts} of {ctx.max_retries}; root signal “{signal}”.",
        f"Earlier failures with the same signal: {len(same)}"
        + (f" (runs {', '.join(p.run_id for p in same)})." if same else "."),
    ]
    if recorded:
        body.append(
            f"Memory already records this pattern: {', '.join(cite(r) for r in recorded)}; it came back."
        )
    return body


def _advice(fixed_before: list[MemoryRecord], result: ReadResult) -> list[str]:
    """What fixed this failure before, and what else memory says."""
    body: list[str] = []
    if fixed_before:
        body += [
            "",
            "What fixed this failure before:",
            # Whole enough to follow: the failing command, the change and the command.
            *(bullet(m, FIX_CHARS) for m in fixed_before[:3]),
        ]
    if result.memories:
        body += ["", "What memory says:", *(bullet(m) for m in result.memories[:6])]
    return body


def _strategy(escalate: bool, same: list[PriorAttempt]) -> list[str]:
    return [
        "",
        "Strategy: "
        + (
            "stop retrying blindly; fix the cause named by the pattern, or ask a person."
            if escalate or len(same) >= SAME_SIGNAL_BEFORE
            else "retry; the failure does not repeat a known pattern yet."
        ),
        f"Escalation: {'yes' if escalate else 'no'}",
    ]
