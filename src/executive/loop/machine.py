"""A step's life as a state machine: one pure function, :func:`advance`.

It takes the step's state and what just happened (an event) and returns the new state and
what to do about it (effects). It reads no file, no clock and no setting: the time comes in
the event, the limits in the state's :class:`Policy`. The executive carries out the effects
and feeds back the events they produce, so every decision about a step is made here:

    Started ─→ record, Hook B ─→ HookAnswered(B) ─→ prepare ─→ WorkerPrepared
      (an attempt left in progress counts first; at the limit the goal blocks instead)
      ─→ route ─→ RouteOpened ─→ spawn ─→ WorkerFinished
      ├ the worker exited cleanly → verify ─→ Verified
      └ it failed, or could not be prepared, routed or started ─┐
    passed → record, Hook C ─→ HookAnswered(C) → the goal completes after its last step
    failed → record; Hook D from the 3rd failure ─→ HookAnswered(D) → keep its diagnosis
           → block (fatal, or at the limit) │ back off until T │ run again at once

A daemon that stopped is recovered by events too: ``Interrupted`` for a step it stopped
during, ``Recovered`` for a goal it stopped with every step done. The step and the goal's
state inside a :class:`StepRun` are copies: ``advance`` never changes its input.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from executive.hooks.result import HookResult
from executive.hookspecs import HookName
from executive.loop import transitions
from executive.loop.attempt import Attempt
from executive.loop.effects import (
    BackOff,
    BlockGoal,
    Effect,
    Prepare,
    Record,
    ReportOutcome,
    Route,
    RunHook,
    Spawn,
    Verify,
)
from executive.untrusted import one_line, opening
from executive.workspace.lifecycle import Active
from executive.workspace.needs_you import error_tail
from executive.workspace.signals import root_signal
from executive.workspace.state import StepState

FAIL_DIAG_FROM = 3  # Hook D runs from a step's third failure on
KEEP_ERRORS = 10  # the errors a step's state keeps, the latest last
DIAGNOSIS_CHARS = 2500  # the part of Hook D's diagnosis a step's state keeps

Phase = Literal[
    "ready",  # pending: may start (selection has seen its backoff elapse)
    "packing",  # started; Hook B is building the worker's memory pack
    "preparing",  # its folder, CLAUDE.md, environment and command line are being made
    "routing",  # its egress route is being opened (sandboxed and networked workers)
    "running",  # the worker runs
    "verifying",  # the worker exited cleanly; the verifiers run
    "reviewing",  # passed; Hook C is recording what was learned
    "diagnosing",  # failed; Hook D is diagnosing the failures
    "waiting",  # failed; backing off until the step's retry_after
    "done",  # passed (and the goal completed if it was the last step)
    "blocked",  # failed for good: the goal is blocked
]


@dataclass(frozen=True)
class Policy:
    """How many failures a step may have and how long it waits after each."""

    limit: int  # failures before the goal is blocked
    backoff_floor: float  # seconds after the first failure, doubled per failure
    backoff_ceiling: float

    def backoff(self, attempts: int) -> float:
        """The wait after ``attempts`` failures: the floor doubled per failure after the
        first, at most the ceiling; none with no failure or a floor of zero."""
        if attempts < 1 or self.backoff_floor <= 0:
            return 0.0
        ceiling = max(self.backoff_ceiling, self.backoff_floor)
        return min(ceiling, self.backoff_floor * 2 ** min(attempts - 1, 32))


@dataclass(frozen=True)
class StepRun:
    """The machine's state: one step of one goal, and how far its attempt has come."""

    active: Active  # the bundle and its state (the step's own among them)
    number: int  # the step's number
    policy: Policy
    phase: Phase = "ready"
    vendor: str = ""
    pack: str | None = None  # Hook B's pack for this attempt's worker
    attempt: Attempt | None = None  # the attempt's outcome so far, once its worker ran

    @property
    def step(self) -> StepState:
        return self.active.state.step(self.number)

    @property
    def worker_busy(self) -> bool:
        """The worker or its verifiers run: the run's resources (its egress route) are open."""
        return self.phase in ("running", "verifying")


# --- events -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Started:
    """The loop picked the step and starts an attempt under ``contract_id``."""

    contract_id: str
    vendor: str
    at: datetime


@dataclass(frozen=True)
class HookAnswered:
    """A hook ran (or was off, or could not run: ``result`` None)."""

    hook: HookName
    result: HookResult | None
    at: datetime
    text: str = ""  # its final text, redacted where it entered the daemon

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.outcome == "ok"


@dataclass(frozen=True)
class WorkerPrepared:
    """The worker's folder, CLAUDE.md, environment and command line are made."""

    at: datetime


@dataclass(frozen=True)
class RouteOpened:
    """The worker's way out is open (or it needs none)."""

    at: datetime


@dataclass(frozen=True)
class WorkerFinished:
    """The worker ended, or never started: preparing it or its route failed (the attempt
    says why, and whether retrying can help)."""

    attempt: Attempt
    at: datetime


@dataclass(frozen=True)
class Verified:
    """The verifiers ran on the worker's output: ``attempt.passed`` says how they found it."""

    attempt: Attempt
    at: datetime


@dataclass(frozen=True)
class Interrupted:
    """Start-up found the step in progress: the daemon stopped during its attempt."""

    at: datetime


@dataclass(frozen=True)
class Recovered:
    """Start-up found the goal still active with every step done: the daemon stopped between
    the last step's record and the goal's (Hook C runs there)."""

    at: datetime


Event = (
    Started
    | HookAnswered
    | WorkerPrepared
    | RouteOpened
    | WorkerFinished
    | Verified
    | Interrupted
    | Recovered
)


class WrongEvent(ValueError):
    """An event the step's phase does not expect (a bug in the loop, never a worker's doing)."""


# --- the machine ------------------------------------------------------------------------------
def advance(run: StepRun, event: Event) -> tuple[StepRun, list[Effect]]:
    """The step's next state and the effects to carry out, in order."""
    run = replace(run, active=Active(run.active.bundle, run.active.state.model_copy(deep=True)))
    match event:
        case Started() if run.phase in ("ready", "waiting"):
            return _started(run, event)
        case HookAnswered(hook=HookName.PRE_SPAWN) if run.phase == "packing":
            pack = event.result.memory_pack if event.ok and event.result is not None else None
            return replace(run, phase="preparing", pack=pack), [Prepare(pack, event.result)]
        case WorkerPrepared() if run.phase == "preparing":
            return replace(run, phase="routing"), [Route()]
        case RouteOpened() if run.phase == "routing":
            return replace(run, phase="running"), [Spawn(run.pack)]
        case WorkerFinished() if run.phase in ("preparing", "routing", "running"):
            if event.attempt.exited_clean:
                return replace(run, phase="verifying", attempt=event.attempt), [
                    Verify(event.attempt)
                ]
            return _finished(run, event.attempt, event.at)
        case Verified() if run.phase == "verifying":
            return _finished(run, event.attempt, event.at)
        case HookAnswered(hook=HookName.POST_RUN) if run.phase == "reviewing":
            return _reviewed(run)
        case HookAnswered(hook=HookName.FAIL_DIAG) if run.phase == "diagnosing":
            return _diagnosed(run, event)
        case Interrupted() if run.step.status == "in_progress":
            return _interrupted(run)
        case Recovered() if run.active.state.next_step() is None:
            # Nothing is left to run, and selection never picks a bundle with no next step.
            done = transitions.goal_completed(run.active, run.step.contract_id, recovered=True)
            return run, [Record(done)]
    raise WrongEvent(f"{type(event).__name__} in phase {run.phase!r} of step {run.number}")


def _started(run: StepRun, event: Started) -> tuple[StepRun, list[Effect]]:
    effects: list[Effect] = []
    if run.step.status == "in_progress":
        # An attempt began and its end was never recorded (the iteration failed under it):
        # it counts, as one the daemon stopped during does, so no failure repeats unbounded.
        run, effects = _interrupted(run)
    step = run.step
    if step.attempts >= run.policy.limit:
        # Never a start past the limit (a restart after the last attempt lands here).
        return _block(run, Attempt(step.contract_id, False, step.last_error), effects)
    bundle, state = run.active.bundle, run.active.state
    if not state.started_at:
        state.started_at = event.at.isoformat()
        effects.append(Record(transitions.goal_started(bundle, state.priority)))
    step.status, step.contract_id = "in_progress", event.contract_id
    step.started_at = event.at.isoformat()
    effects.append(Record(transitions.step_started(step, event.contract_id, event.vendor)))
    effects.append(RunHook(HookName.PRE_SPAWN))
    return replace(run, phase="packing", vendor=event.vendor, pack=None, attempt=None), effects


def _finished(run: StepRun, attempt: Attempt, at: datetime) -> tuple[StepRun, list[Effect]]:
    step = run.step
    step.finished_at, step.duration_seconds = at.isoformat(), round(attempt.duration_seconds, 3)
    run = replace(run, attempt=attempt)
    if attempt.passed:
        step.status = "done"
        return replace(run, phase="reviewing"), [
            ReportOutcome("passed"),
            Record(transitions.step_completed(step, attempt)),
            RunHook(HookName.POST_RUN),
        ]
    step.status = "pending"
    step.attempts += 1
    step.last_error = attempt.error
    step.errors = [*step.errors, attempt.error[-500:]][-KEEP_ERRORS:]
    failed = transitions.step_failed(step, attempt, root_signal(attempt.error))
    effects: list[Effect] = [ReportOutcome("fatal" if attempt.fatal else "failed"), Record(failed)]
    if step.attempts >= FAIL_DIAG_FROM:
        return replace(run, phase="diagnosing"), [*effects, RunHook(HookName.FAIL_DIAG)]
    run, after = _settle(run, at)
    return run, effects + after


def _reviewed(run: StepRun) -> tuple[StepRun, list[Effect]]:
    assert run.attempt is not None  # reviewing follows a passed attempt
    if run.active.state.next_step() is not None:
        return replace(run, phase="done"), []
    completed = transitions.goal_completed(run.active, run.attempt.contract_id)
    return replace(run, phase="done"), [Record(completed)]


def _diagnosed(run: StepRun, event: HookAnswered) -> tuple[StepRun, list[Effect]]:
    effects: list[Effect] = []
    if event.ok and event.text:
        # Whole, from its start (a person reads it in needs-you and bundle show).
        run.step.diagnosis = opening(event.text, DIAGNOSIS_CHARS)
        effects.append(Record(transitions.diagnosis_kept()))
    run, after = _settle(run, event.at)
    return run, effects + after


def _settle(run: StepRun, at: datetime) -> tuple[StepRun, list[Effect]]:
    """After a failure: block the goal, back off, or leave the step to run again at once."""
    step, attempt, policy = run.step, run.attempt, run.policy
    assert attempt is not None  # settling follows a failed attempt
    if attempt.fatal or step.attempts >= policy.limit:
        return _block(run, attempt)
    delay = policy.backoff(step.attempts)
    if not delay:
        return replace(run, phase="ready"), []
    until = at + timedelta(seconds=delay)
    step.retry_after = until.isoformat()
    scheduled = transitions.retry_scheduled(step, delay)
    return replace(run, phase="waiting"), [BackOff(scheduled, until, delay)]


def _block(
    run: StepRun, attempt: Attempt, effects: list[Effect] | None = None
) -> tuple[StepRun, list[Effect]]:
    """The goal blocked after ``attempt``: fatal, or the step's failures at the limit."""
    step, policy = run.step, run.policy
    step.retry_after = ""  # blocked: nothing waits for a time any more
    reason = (
        f"cannot run: {one_line(attempt.error)[:300]}"
        if attempt.fatal
        else f"step {step.number} “{step.title}” failed {step.attempts} times (limit {policy.limit})"
    )
    block = transitions.Block(
        reason,
        [f"last run log: {attempt.log_path}" if attempt.log_path else "no run log"],
        [
            ("Last error (its last lines)", error_tail(attempt.error)),
            ("Hook D's diagnosis", step.diagnosis),
        ],
    )
    blocked = transitions.goal_blocked(run.active.bundle, step, attempt.contract_id, block)
    return replace(run, phase="blocked"), [
        *(effects or []),
        BlockGoal(blocked, reason, step.diagnosis),
    ]


def _interrupted(run: StepRun) -> tuple[StepRun, list[Effect]]:
    step = run.step
    step.status = "pending"
    step.attempts += 1
    step.last_error = (
        f"interrupted: the daemon stopped during attempt {step.attempts} ({step.contract_id})"
    )
    step.errors = [*step.errors, step.last_error][-KEEP_ERRORS:]
    interrupted = transitions.interrupted(step)
    return replace(run, phase="ready"), [Record(interrupted)]
