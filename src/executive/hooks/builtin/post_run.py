"""Hook C: the post-run decision tree (0-3 writes), from what the worker did.

Its figures and its rules for a lesson are declared in :mod:`executive.hooks.harvest`,
which the LLM engine's skill is filled in from.

1. One experience card for a non-trivial run (:mod:`executive.hooks.builtin.card`).
2. A lesson for each failure→fix the run shows that keeps the harvest's lesson rules: a
   command that failed, then the change and the same command passing (within the run), or
   what the passing attempt changed after an earlier one failed (across attempts). Said
   without run ids, so the same lesson from another run is the same memory.
3. A semantic memory when the run carries a signal for one: a step over twice its expected
   time, or a verifier's note; and "retry it" when a retry passed without changing anything.

Then the memories of the project about a file this run changed are marked possibly outdated.
"""

from __future__ import annotations

import re
from typing import Any

from executive.hooks.builtin.card import card, symbol_names
from executive.hooks.builtin.summary import harvest_summary, payload
from executive.hooks.context import PostRunContext
from executive.hooks.engine import EngineOutput
from executive.hooks.harvest import RUN_HARVEST
from executive.hooks.tools import HookTools
from executive.untrusted import clip
from executive.workers.record import (
    ACROSS,
    FileChange,
    Fix,
    command_core,
    command_key,
    fix_across,
    harness,
    own_test,
    scratch,
    unsafe_command,
)
from executive.workspace.signals import root_signal, signal_tag

H = RUN_HARVEST
SHOWN_CHARS = 120  # of a command, in a lesson
_CD = re.compile(r"\bcd\b")
_QUOTED = re.compile(r"['\"]([\w./-]+)['\"]")
_NOTE_PREFIXES = ("note:", "warning:", "warn:")
# Programs whose run is the project's own (a build, a linter), not a script of the run's.
_PROJECT_PROGRAMS = frozenset(
    [
        "make",
        "npm",
        "yarn",
        "pnpm",
        "bun",
        "cargo",
        "go",
        "mvn",
        "gradle",
        "dotnet",
        "tox",
        "nox",
        "mypy",
        "ruff",
        "flake8",
        "pylint",
        "black",
        "eslint",
        "tsc",
        "pyright",
        "bazel",
        "cmake",
    ]
)


def _payload(ctx: PostRunContext, text: str, **meta: Any) -> dict[str, Any]:
    item = ctx.work_item
    source = item.source or f"workspace/completed/{item.bundle_slug}/PROMPT.md"
    return payload(ctx, text, trigger="post-run", source=source, **meta)


def _observed(ctx: PostRunContext) -> list[str]:
    """What the daemon saw of this run itself: its verifiers (Hook C runs on a pass) and,
    when it could compare the folder, the files that changed on disk."""
    seen = ["verifiers"] if ctx.validation_report.verifiers else []
    return seen + (["files"] if ctx.experience is not None and ctx.experience.observed else [])


def episode(ctx: PostRunContext) -> dict[str, Any]:
    """The run's experience card."""
    experience = ctx.experience
    files = experience.project_files[: H.max_files] if experience else []
    names = symbol_names(experience) if experience else []
    return _payload(
        ctx,
        card(ctx),
        type="episodic",
        category="project",
        importance="medium" if ctx.attempts == 1 else "high",
        confidence=H.card_confidence,
        outcome="success",
        tags=[ctx.work_item.bundle_slug[:40], "post-run"],
        files=files or None,
        symbols=names[: H.max_symbols] or None,
        observed=_observed(ctx) or None,
    )


def _across(ctx: PostRunContext) -> Fix | None:
    """What the passing attempt changed after the last one failed (None: nothing changed)."""
    if ctx.attempts == 1 or not ctx.prior_errors:
        return None
    return fix_across(ctx.prior_errors[-1], ctx.experience)


def _project_command(command: str) -> bool:
    return own_test(command) or command_key(command).split(" ", 1)[0] in _PROJECT_PROGRAMS


def lesson_worthy(ctx: PostRunContext, fix: Fix) -> Fix | None:
    """The fix as a lesson, its scratch files out; None when the daemon's observation does
    not bear it out, when it would have a worker run what it downloads, or when it teaches
    nothing about the code (no project file, no project command)."""
    experience = ctx.experience
    if experience is None or any(unsafe_command(c) for c in (fix.failed, fix.then) if c):
        return None
    if harness(fix.error) and (_CD.search(fix.error) or (fix.files and not _names(fix))):
        # A ``cd`` into a folder not there says nothing of the project, and a change to the
        # project fixes its setting only when it makes what the error names (``No module
        # named 'weather'`` and ``src/weather/``): other files changed by chance.
        return None
    if fix.files and (not experience.observed or not set(fix.files) <= set(experience.changed)):
        return None  # a file the record says it changed that the folder does not show
    files = [p for p in fix.files if not scratch(FileChange(path=p, change=_change(ctx, p)))]
    commands = [c for c in (fix.failed, fix.then) if c and c != ACROSS]
    if not files and not any(_project_command(c) for c in commands):
        return None
    # Shown as the commands read alone: a ``cd`` before them, a pipe after them, left out.
    failed = fix.failed if fix.failed == ACROSS else clip(command_core(fix.failed), SHOWN_CHARS)
    then = clip(command_core(fix.then), SHOWN_CHARS) if fix.then else ""
    return fix.model_copy(update={"files": files, "failed": failed, "then": then})


def _names(fix: Fix) -> bool:
    """Whether a file of the fix is named in its error (a module, a file it could not find)."""
    named = {part for quoted in _QUOTED.findall(fix.error) for part in re.split(r"[./]", quoted)}
    parts = {re.sub(r"\.\w+$", "", part) for path in fix.files for part in path.split("/")}
    return bool(named & parts - {""})


def _change(ctx: PostRunContext, path: str) -> str:
    files = ctx.experience.files if ctx.experience else []
    return next((f.change for f in files if f.path == path), "modified")


def fixes(ctx: PostRunContext) -> list[dict[str, Any]]:
    """A procedural memory for each fix worth one: within the run first, then across."""
    found = list(reversed(ctx.experience.fixes)) if ctx.experience else []
    if (across := _across(ctx)) is not None:
        found.append(across)
    lessons = [kept for fix in found if (kept := lesson_worthy(ctx, fix)) is not None]
    observed = ["verifiers"] + (["files"] if any(f.files for f in lessons) else [])
    return [
        _payload(
            ctx,
            fix.lesson(),
            type="procedural",
            category="technical",
            importance="medium",
            confidence=H.across_confidence if fix.failed == ACROSS else H.lesson_confidence,
            tags=["fix", signal_tag(root_signal(fix.error or "no error output"))],
            files=fix.files[: H.max_files] or None,
            observed=observed,
        )
        for fix in lessons
    ]


def signals(ctx: PostRunContext) -> list[dict[str, Any]]:
    """Semantic notes (a slow step, a verifier's note) and "retry it" when a plain retry passed."""
    step, report = ctx.current_step, ctx.validation_report
    found: list[tuple[str, str, str, str]] = []  # text, type, importance, tag
    where = f"step {step.number} “{step.title}”"
    expected = step.estimated_seconds
    if expected and ctx.duration_seconds > H.slow_factor * expected:
        slow = (
            f"{where.capitalize()} took {ctx.duration_seconds:.0f}s, over {H.slow_factor:g} times "
            f"its expected {expected:.0f}s: budget more time for it."
        )
        found.append((slow, "semantic", "medium", "slow-step"))
    notes = [
        f"{v.verifier}: {v.message}"
        for v in report.verifiers
        if v.message.lower().startswith(_NOTE_PREFIXES)
    ]
    if notes:
        found.append(
            (f"Verifier notes on {where}: " + "; ".join(notes), "semantic", "low", "verifier-note")
        )
    if ctx.attempts > 1 and _across(ctx) is None:
        signal = root_signal(ctx.prior_errors[-1]) if ctx.prior_errors else "an unrecorded error"
        retry = f"When {where} fails with “{signal}”, retry it: a plain retry passed."
        found.append((retry, "procedural", "medium", "retry-passed"))
    return [
        _payload(
            ctx,
            text,
            type=kind,
            category="technical",
            importance=weight,
            confidence=H.note_confidence,
            tags=[tag],
        )
        for text, kind, weight, tag in found
    ]


def decide(ctx: PostRunContext) -> tuple[list[dict[str, Any]], list[str]]:
    """The payloads this run deserves, and notes on what was skipped and why."""
    if not ctx.validation_report.verifiers and not ctx.output_changed:
        return [], ["trivial run (no verifiers, no output): nothing to remember"]
    planned = [episode(ctx), *fixes(ctx), *signals(ctx)]
    limit = H.max_writes
    notes = [f"over the {limit}-write limit: {p['text'][:80]}" for p in planned[limit:]]
    return planned[:limit], notes


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
