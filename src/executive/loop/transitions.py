"""A bundle's transitions (a step started, passed, failed; a bundle started, completed,
blocked), each up to four records: the state file, a work-ledger event, a log line and a
PROGRESS line. Each function below says what one records; :class:`Recorder` writes them,
always in the same order, so no transition forgets one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from executive.logs import get_logger
from executive.loop.attempt import Attempt
from executive.spend import not_reported
from executive.workers.record import brief
from executive.workspace.bundle import Bundle
from executive.workspace.ledger import WorkLedger
from executive.workspace.lifecycle import Active, Workspace
from executive.workspace.state import StepState, log_progress

log = get_logger(__name__)


@dataclass(frozen=True)
class Block:
    """Blocking the bundle: why, and what the needs-you entry shows the operator."""

    reason: str
    details: list[str]
    blocks: Sequence[tuple[str, str]] = ()


@dataclass(frozen=True)
class Transition:
    event: str | None  # the work-ledger event (None: the ledger does not hear of it)
    # The ledger entry (the recorder adds the bundle); the log line repeats ``log_keys`` of it.
    fields: dict[str, Any]
    log_event: str | None = None
    log_keys: tuple[str, ...] = ()
    progress: str | None = None  # the line for the bundle's PROGRESS log
    warning: bool = False  # the log line's level: a warning, or info
    # The state file: saved, left alone (a later transition saves it), or the bundle moved
    # to completed or blocked (which save it and write their own PROGRESS line).
    state: Literal["save", "keep", "complete"] | Block = "save"


class Recorder:
    """Writes a transition: state file, ledger, log line, then the PROGRESS log, last because
    a planted link there raises ``UnsafeFile`` (the caller quarantines the bundle): by then
    the state, the ledger and the log all say what happened."""

    def __init__(self, workspace: Workspace, ledger: WorkLedger) -> None:
        self.workspace = workspace
        self.ledger = ledger

    def record(self, active: Active, transition: Transition) -> None:
        state = transition.state
        if state == "save":
            self.workspace.save(active)
        elif state == "complete":
            self.workspace.complete(active)
        elif isinstance(state, Block):
            self.workspace.block(active, state.reason, state.details, state.blocks)
        fields = {"bundle": active.bundle.slug, **transition.fields}
        if transition.event is not None:
            self.ledger.append(transition.event, **fields)
        if transition.log_event is not None:
            line = {k: fields[k] for k in transition.log_keys}
            (log.warning if transition.warning else log.info)(transition.log_event, **line)
        if transition.progress is not None:
            log_progress(active.bundle.folder, transition.progress)


# --- the transitions ---------------------------------------------------------------------------
def interrupted(step: StepState) -> Transition:
    """Start-up found the step in progress: the daemon stopped during it."""
    return Transition(
        "STEP_INTERRUPTED",
        {
            "step": step.number,
            "contract_id": step.contract_id,
            "attempt": step.attempts,
        },
        "step.interrupted",
        # Start-up runs outside any bundle's log context, so the line names the bundle.
        ("bundle", "step", "contract_id"),
        progress=f"step {step.number} interrupted; back to pending",
        warning=True,
    )


def goal_started(bundle: Bundle, priority: str) -> Transition:
    # The step's own start, recorded next, saves the state and logs the line.
    return Transition(
        "GOAL_STARTED",
        {"title": bundle.title, "priority": priority},
        state="keep",
    )


def step_started(step: StepState, contract_id: str, vendor: str) -> Transition:
    attempt = step.attempts + 1
    return Transition(
        "STEP_STARTED",
        {
            "step": step.number,
            "step_title": step.title,
            "contract_id": contract_id,
            "attempt": attempt,
            "vendor": vendor,
        },
        "step.started",
        ("step", "attempt", "contract_id", "vendor"),
        progress=f"step {step.number} attempt {attempt} started ({contract_id})",
    )


def step_completed(step: StepState, attempt: Attempt) -> Transition:
    return Transition(
        "STEP_COMPLETED",
        {
            "step": step.number,
            "step_title": step.title,
            "contract_id": attempt.contract_id,
            "attempts": step.attempts + 1,
            "duration_seconds": step.duration_seconds,
            "estimated_seconds": step.estimated_seconds,
            **_outcome(attempt),
        },
        "step.completed",
        ("step", "contract_id", "attempts"),
        progress=f"step {step.number} passed ({attempt.contract_id})",
    )


def _outcome(attempt: Attempt) -> dict[str, Any]:
    """The verifiers' results, a paid run's spend as the CLI reported it with the pack's tokens
    beside it (none for a command worker: it costs nothing to count), what the worker did."""
    out: dict[str, Any] = {"verifiers": [r.as_dict() for r in attempt.results]}
    if attempt.paid:
        spend, tokens = attempt.spend, attempt.pack_tokens
        out["spend"] = spend.record(tokens) if spend is not None else not_reported(tokens)
    if kept := brief(attempt.experience):
        out["experience"] = kept
    return out


def goal_completed(active: Active, contract_id: str, *, recovered: bool = False) -> Transition:
    """The last step is done. ``recovered``: start-up found it done but the goal still active
    (the daemon stopped after the step was recorded, before the goal was)."""
    bundle, steps = active.bundle, active.state.steps
    return Transition(
        "GOAL_COMPLETED",
        {
            "title": bundle.title,
            "contract_id": contract_id,
            "steps": len(steps),
            "step_titles": [s.title for s in steps],
            **({"recovered": True} if recovered else {}),
        },
        "goal.completed",
        # Start-up runs outside any bundle's log context, so its line names the bundle.
        ("bundle", "title", "recovered") if recovered else ("title",),
        state="complete",
    )


def step_failed(step: StepState, attempt: Attempt, signal: str) -> Transition:
    return Transition(
        "STEP_FAILED",
        {
            "step": step.number,
            "step_title": step.title,
            "contract_id": attempt.contract_id,
            "attempt": step.attempts,
            "error": attempt.error[-1000:],
            "signal": signal,
            **_outcome(attempt),
        },
        "step.failed",
        ("step", "attempt", "contract_id", "signal"),
        progress=f"step {step.number} failed (attempt {step.attempts}): {signal}",
        warning=True,
    )


def goal_blocked(bundle: Bundle, step: StepState, contract_id: str, block: Block) -> Transition:
    return Transition(
        "GOAL_BLOCKED",
        {
            "title": bundle.title,
            "reason": block.reason,
            "attempts": step.attempts,
            "contract_id": contract_id,
        },
        "goal.blocked",
        ("reason",),
        warning=True,
        state=block,
    )


def retry_scheduled(step: StepState, wait_seconds: float) -> Transition:
    # Only the state file and the log: the ledger's STEP_FAILED already says it failed.
    line = {
        "step": step.number,
        "attempt": step.attempts,
        "wait_seconds": wait_seconds,
        "retry_after": step.retry_after,
    }
    return Transition(None, line, "step.retry_scheduled", tuple(line))


def diagnosis_kept() -> Transition:
    # Hook D's diagnosis is in the step's state: only the state file hears of it (the
    # needs-you entry quotes it if the goal is blocked).
    return Transition(None, {})
