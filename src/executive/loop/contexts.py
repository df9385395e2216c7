"""Building each hook's context from the bundle, its state and the work ledger."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from pydantic import ValidationError

from executive.hooks.context import (
    MAX_RUN_EXPERIENCES,
    FailDiagContext,
    FailureSignals,
    HookContext,
    Outcome,
    PostRunContext,
    PreSpawnContext,
    PreWorkContext,
    PriorAttempt,
    RunExperience,
    Step,
    ValidationReport,
    VerifierReport,
    WorkItem,
)
from executive.hookspecs import HookName
from executive.logs import get_logger
from executive.loop.attempt import Attempt
from executive.loop.machine import StepRun
from executive.memory.taxonomy import harvest_run_id
from executive.redact import redactor
from executive.workers.record import Experience
from executive.workspace.ledger import LedgerFold, WorkLedger
from executive.workspace.lifecycle import Active
from executive.workspace.signals import root_signal
from executive.workspace.state import StepState

log = get_logger(__name__)

P = ParamSpec("P")
C = TypeVar("C", bound=HookContext)


def told(build: Callable[P, C]) -> Callable[P, C | None]:
    """A hook's context builder whose failure is a value: the context, redacted (it quotes
    goals, errors and verifier evidence, and an engine, so memory, reads it), or None with a
    ``hook.context_failed`` line: that hook does not run, and nothing here stops the loop."""

    @functools.wraps(build)
    def safe(*args: P.args, **kwargs: P.kwargs) -> C | None:
        try:
            context = build(*args, **kwargs)
            return type(context).model_validate(redactor().value(context.model_dump()))
        except Exception as exc:
            log.exception("hook.context_failed", builder=build.__name__, error=repr(exc))
            return None

    return safe


RECENT = 5


def work_item(active: Active, home_root: Path, output_dir: Path) -> WorkItem:
    bundle, prompt = active.bundle, active.bundle.folder / "PROMPT.md"
    source = str(prompt.relative_to(home_root) if prompt.is_relative_to(home_root) else prompt)
    return WorkItem(
        id=bundle.slug,
        title=bundle.title,
        description=bundle.goal[:2000],
        priority=active.state.priority,
        bundle_slug=bundle.slug,
        app_id=bundle.app_id,
        output_path=str(output_dir),
        source=source,
    )


def step_of(state: StepState) -> Step:
    return Step(number=state.number, title=state.title, estimated_seconds=state.estimated_seconds)


class Recent(LedgerFold):
    """The last few successes and failures in the work ledger, for Hook A's context; read
    before every iteration with work, so it reads only the events appended since."""

    def reset(self) -> None:
        self.failures: deque[Outcome] = deque(maxlen=RECENT)
        self.successes: deque[Outcome] = deque(maxlen=RECENT)

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind not in ("GOAL_COMPLETED", "GOAL_BLOCKED", "STEP_FAILED"):
            return
        outcome = Outcome(
            bundle_slug=str(event.get("bundle", "")),
            title=str(event.get("title", "")),
            result="success"
            if kind == "GOAL_COMPLETED"
            else "failure"
            if kind == "STEP_FAILED"
            else "blocked",
            run_id=str(event.get("contract_id", "")),
            at=str(event.get("ts", "")),
        )
        (self.successes if outcome.result == "success" else self.failures).append(outcome)


@told
def pre_work(queued: list[WorkItem], picked: str, recent: Recent) -> PreWorkContext:
    recent.refresh()
    return PreWorkContext(
        queued=queued,
        picked=picked,
        recent_failures=list(recent.failures),
        recent_successes=list(recent.successes),
    )


def pre_spawn(item: WorkItem, step: StepState, vendor: str) -> PreSpawnContext:
    return PreSpawnContext(
        work_item=item,
        current_step=step_of(step),
        vendor=vendor,
        retry_attempt=step.attempts + 1,
        last_error=step.last_error,
    )


def post_run(item: WorkItem, run: StepRun, attempt: Attempt) -> PostRunContext:
    step = run.step
    return PostRunContext(
        work_item=item,
        current_step=step_of(step),
        vendor=run.vendor,
        validation_report=ValidationReport(
            passed=True,
            verifiers=[VerifierReport(**r.as_dict()) for r in attempt.results],
        ),
        # The run's memories and the ledger's record of it share the contract's own nonce.
        harvest_run=harvest_run_id(item.bundle_slug, suffix=attempt.contract_id.rsplit("-", 1)[-1]),
        attempts=step.attempts + 1,
        prior_errors=step.errors[-3:],
        run_started_at=step.started_at,
        run_ended_at=step.finished_at,
        duration_seconds=step.duration_seconds,
        contract_id=attempt.contract_id,
        output_changed=attempt.output_changed,
        experience=attempt.experience,
    )


def fail_diag(
    item: WorkItem, run: StepRun, attempt: Attempt, ledger: WorkLedger
) -> FailDiagContext:
    step = run.step
    failed = [
        e
        for e in ledger.events("STEP_FAILED")
        if e.get("bundle") == item.bundle_slug and e.get("step") == step.number
    ]
    *earlier, _current = failed or [{}]
    return FailDiagContext(
        work_item=item,
        current_step=step_of(step),
        vendor=run.vendor,
        failure_signals=FailureSignals(
            attempts=step.attempts,
            last_error=step.last_error,
            signal=root_signal(step.last_error),
            output_path=item.output_path,
        ),
        prior_attempts=[
            PriorAttempt(
                run_id=str(e.get("contract_id", "")),
                attempt=int(e.get("attempt", 0)),
                error=str(e.get("error", "")),
                signal=str(e.get("signal", "")),
                at=str(e.get("ts", "")),
                experience=recorded_experience(e),
            )
            for e in earlier
        ],
        harvest_run=harvest_run_id(f"fail-{item.bundle_slug}-{step.attempts}"),
        max_retries=run.policy.limit,
        experience=attempt.experience,
    )


def recorded_experience(event: dict[str, Any]) -> Experience | None:
    """The brief digest a ledger event keeps; a hand-edited one that no longer reads is
    logged and left out (the hook still runs on the rest)."""
    kept = event.get("experience")
    if kept is None:
        return None
    try:
        return Experience.model_validate(kept)
    except ValidationError as exc:
        log.warning(
            "experience.ledger_unreadable",
            contract_id=str(event.get("contract_id", "")),
            error=str(exc)[:300],
        )
        return None


def run_experiences(ledger: WorkLedger, since: str) -> list[RunExperience]:
    """The step outcomes after ``since`` that kept what their worker did, the latest last."""
    found = []
    for event in ledger.events():
        kind = event.get("event")
        if kind not in ("STEP_COMPLETED", "STEP_FAILED") or str(event.get("ts", "")) <= since:
            continue
        experience = recorded_experience(event)
        if experience is not None:
            found.append(
                RunExperience(
                    bundle_slug=str(event.get("bundle", "")),
                    step=int(event.get("step", 0) or 0),
                    contract_id=str(event.get("contract_id", "")),
                    outcome="passed" if kind == "STEP_COMPLETED" else "failed",
                    experience=experience,
                )
            )
    return found[-MAX_RUN_EXPERIENCES:]


@told
def of_step(hook: HookName, run: StepRun, item: WorkItem, ledger: WorkLedger) -> HookContext:
    """The context of a hook the step's machine asks for (B, C or D), from its state."""
    step, attempt = run.step, run.attempt
    if hook is HookName.PRE_SPAWN:
        return pre_spawn(item, step, run.vendor)
    if attempt is None:  # C and D follow an attempt
        raise ValueError(f"hook {hook.value} asked for before step {step.number} ran")
    if hook is HookName.POST_RUN:
        return post_run(item, run, attempt)
    if hook is HookName.FAIL_DIAG:
        return fail_diag(item, run, attempt, ledger)
    raise ValueError(f"hook {hook.value} is not a step's hook")
