"""A step's state machine, driven by hand: no file system, no subprocess, no clock.

Every event carries its time; the bundle's folder is a path nothing reads.
"""

from __future__ import annotations

import builtins
import os
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from executive.hooks.result import HookResult
from executive.hookspecs import HookName
from executive.loop import machine, transitions
from executive.loop.attempt import Attempt
from executive.loop.machine import (
    BackOff,
    BlockGoal,
    HookAnswered,
    Prepare,
    Record,
    ReportOutcome,
    Route,
    RouteOpened,
    RunHook,
    Spawn,
    Started,
    StepRun,
    Verified,
    Verify,
    WorkerFinished,
    WorkerPrepared,
)
from executive.workers.verifiers import VerifierResult
from executive.workspace.bundle import Bundle, Frontmatter, StepSpec
from executive.workspace.lifecycle import Active
from executive.workspace.state import BundleState, StepState

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
NOWHERE = Path("/nonexistent/greet")  # nothing here reads it


def goal(steps: int = 1, *, limit: int = 3, floor: float = 30.0, ceiling: float = 100.0) -> StepRun:
    specs = [StepSpec(title=f"part {n}") for n in range(1, steps + 1)]
    bundle = Bundle(
        slug="greet",
        folder=NOWHERE,
        spec=Frontmatter(title="Greet", command=["true"], steps=specs),
        goal="Say hello.",
    )
    state = BundleState(
        slug="greet",
        title="Greet",
        priority="P3",
        steps=[StepState(number=s, title=f"part {s}") for s in range(1, steps + 1)],
    )
    return StepRun(Active(bundle, state), 1, machine.Policy(limit, floor, ceiling))


def answered(
    hook: HookName, at: datetime, *, text: str = "", pack: str | None = None
) -> HookAnswered:
    result = HookResult(hook=hook.value, ran=True, final_text=text, memory_pack=pack)
    return HookAnswered(hook, result, at, text)


def clean(contract_id: str = "c-1") -> Attempt:
    return Attempt(contract_id, False, duration_seconds=1.23456, exited_clean=True)


def failing(contract_id: str = "c-1", error: str = "error: ECONNRESET") -> Attempt:
    return Attempt(contract_id, False, error, duration_seconds=2.0)


def spawned(run: StepRun, at: datetime, contract_id: str = "c-1") -> StepRun:
    """Started, packed, prepared and routed: the worker is running."""
    run, _ = machine.advance(run, Started(contract_id, "command", at))
    run, effects = machine.advance(run, answered(HookName.PRE_SPAWN, at, pack="the pack"))
    assert effects == [Prepare("the pack", effects[0].packed)]
    run, effects = machine.advance(run, WorkerPrepared(at))
    assert effects == [Route()]
    run, effects = machine.advance(run, RouteOpened(at))
    assert effects == [Spawn("the pack")]
    return run


def fail(run: StepRun, at: datetime, n: int) -> tuple[StepRun, list[machine.Effect]]:
    contract_id = f"c-{n}"
    return machine.advance(spawned(run, at, contract_id), WorkerFinished(failing(contract_id), at))


def kinds(effects: list[machine.Effect]) -> list[str]:
    return [
        f"Record:{e.transition.event or e.transition.log_event}"
        if type(e) is Record  # BackOff and BlockGoal are records too, named for themselves
        else type(e).__name__
        for e in effects
    ]


# --- success ----------------------------------------------------------------------------------
def test_a_passing_step_is_packed_spawned_verified_recorded_and_completes_its_goal():
    run = goal()
    run, effects = machine.advance(run, Started("c-1", "command", T0))
    assert kinds(effects) == ["Record:GOAL_STARTED", "Record:STEP_STARTED", "RunHook"]
    assert effects[-1] == RunHook(HookName.PRE_SPAWN)
    assert (run.phase, run.step.status, run.step.contract_id) == ("packing", "in_progress", "c-1")
    assert run.active.state.started_at == run.step.started_at == T0.isoformat()

    run, effects = machine.advance(run, answered(HookName.PRE_SPAWN, T0, pack="# Memory"))
    assert [(e.pack, e.packed.memory_pack) for e in effects] == [("# Memory", "# Memory")]
    assert (run.phase, run.worker_busy) == ("preparing", False)
    run, effects = machine.advance(run, WorkerPrepared(T0))
    assert (effects, run.phase, run.worker_busy) == ([Route()], "routing", False)
    run, effects = machine.advance(run, RouteOpened(T0))
    assert (effects, run.phase) == ([Spawn("# Memory")], "running")
    assert run.worker_busy  # its route is open: closed when the attempt ends

    run, effects = machine.advance(run, WorkerFinished(clean(), T0 + timedelta(seconds=5)))
    assert effects == [Verify(clean())]
    assert (run.phase, run.step.finished_at) == ("verifying", "")

    ended = T0 + timedelta(seconds=9)
    passed = Attempt(
        "c-1", True, results=[VerifierResult("out", "PASS", "out exists")], duration_seconds=1.23456
    )
    run, effects = machine.advance(run, Verified(passed, ended))
    assert kinds(effects) == ["ReportOutcome", "Record:STEP_COMPLETED", "RunHook"]
    assert effects[0] == ReportOutcome("passed")
    assert effects[1].transition.fields["verifiers"] == [passed.results[0].as_dict()]
    assert effects[-1] == RunHook(HookName.POST_RUN)
    assert (run.step.status, run.step.finished_at) == ("done", ended.isoformat())
    assert run.step.duration_seconds == 1.235
    assert not run.worker_busy

    run, effects = machine.advance(run, answered(HookName.POST_RUN, ended))
    assert kinds(effects) == ["Record:GOAL_COMPLETED"]
    assert effects[0].transition.state == "complete"
    assert run.phase == "done"


def both_ends() -> tuple[str, str]:
    """A step driven to success, and one to a block through Hook D."""
    run = spawned(goal(limit=3), T0)
    run, _ = machine.advance(run, WorkerFinished(clean(), T0))
    run, _ = machine.advance(run, Verified(Attempt("c-1", True), T0))
    run, _ = machine.advance(run, answered(HookName.POST_RUN, T0))
    blocked = goal(limit=3)
    for n in (1, 2, 3):
        blocked, _ = fail(blocked, T0, n)
    blocked, _ = machine.advance(blocked, answered(HookName.FAIL_DIAG, T0, text="why"))
    return run.phase, blocked.phase


def test_advance_reads_no_file_no_process_and_no_clock(monkeypatch):
    reached: list[str] = []

    def outside(name: str):
        def refuse(*args, **kwargs):
            reached.append(name)
            raise RuntimeError(f"the machine called {name}")

        return refuse

    calls = [(builtins, "open"), (os, "stat"), (os, "open"), (subprocess, "Popen")]
    calls += [(time, "time"), (time, "monotonic")]
    with monkeypatch.context() as patched:  # undone before pytest reports anything
        for owner, name in calls:
            patched.setattr(owner, name, outside(name))
        try:
            phases = both_ends()
        except RuntimeError:
            phases = None
    assert reached == []
    assert phases == ("done", "blocked")


def test_advance_never_changes_the_state_it_is_given():
    run = goal()
    before = run.active.state.model_dump()
    after, _ = machine.advance(run, Started("c-1", "command", T0))
    assert run.active.state.model_dump() == before
    assert run.phase == "ready"
    assert after.active.state is not run.active.state


def test_the_first_of_two_steps_passing_leaves_the_goal_open_and_started_once():
    run = spawned(goal(steps=2), T0)
    run, _ = machine.advance(run, WorkerFinished(clean(), T0))
    run, _ = machine.advance(run, Verified(Attempt("c-1", True), T0))
    run, effects = machine.advance(run, answered(HookName.POST_RUN, T0))
    assert (effects, run.phase) == ([], "done")

    second = StepRun(run.active, 2, run.policy)
    second, effects = machine.advance(second, Started("c-2", "command", T0))
    assert kinds(effects) == ["Record:STEP_STARTED", "RunHook"]  # the goal had started


def test_a_pack_hook_that_failed_or_is_off_spawns_without_a_pack():
    run, _ = machine.advance(goal(), Started("c-1", "command", T0))
    broken = HookResult(hook="pre_spawn", ran=True, error="boom", memory_pack="half a pack")
    off = HookResult(hook="pre_spawn", ran=False, skipped=True, reason="off")
    for result in (None, off, broken):
        _, effects = machine.advance(run, HookAnswered(HookName.PRE_SPAWN, result, T0))
        assert effects == [Prepare(None, result)]


@pytest.mark.parametrize("phase_events", [0, 1])
def test_a_worker_that_could_not_be_prepared_or_routed_is_a_failed_attempt(phase_events):
    run, _ = machine.advance(goal(), Started("c-1", "command", T0))
    run, _ = machine.advance(run, answered(HookName.PRE_SPAWN, T0))
    if phase_events:
        run, _ = machine.advance(run, WorkerPrepared(T0))  # then the route could not open
    refused = Attempt("c-1", False, "egress: the proxy could not start", fatal=True)
    run, effects = machine.advance(run, WorkerFinished(refused, T0))
    assert kinds(effects)[:2] == ["ReportOutcome", "Record:STEP_FAILED"]
    assert effects[0] == ReportOutcome("fatal")
    assert (run.step.attempts, run.phase) == (1, "blocked")


# --- retry and backoff ------------------------------------------------------------------------
def test_a_failed_worker_is_not_verified_and_backs_off_doubling_up_to_the_ceiling():
    run, at = goal(limit=10, floor=30, ceiling=100), T0
    waits = []
    for n in range(1, 5):
        run, effects = fail(run, at, n)
        if run.phase == "diagnosing":  # Hook D from the third failure; it had nothing to say
            run, more = machine.advance(run, answered(HookName.FAIL_DIAG, at))
            effects += more
        assert kinds(effects)[:2] == ["ReportOutcome", "Record:STEP_FAILED"]
        [backoff] = [e for e in effects if isinstance(e, BackOff)]
        assert backoff.until == at + timedelta(seconds=backoff.seconds)
        assert run.step.retry_after == backoff.until.isoformat()
        assert (run.phase, run.step.status, run.step.attempts) == ("waiting", "pending", n)
        waits.append(backoff.seconds)
        at = backoff.until
    assert waits == [30, 60, 100, 100]


def test_with_no_backoff_a_failed_step_is_ready_at_once():
    run, effects = fail(goal(floor=0), T0, 1)
    assert kinds(effects) == ["ReportOutcome", "Record:STEP_FAILED"]
    assert (run.phase, run.step.retry_after) == ("ready", "")


def test_a_failure_is_recorded_with_its_error_signal_and_experience_kept_in_the_state():
    run, effects = fail(goal(), T0, 1)
    failed = effects[1].transition
    assert failed.fields["error"] == "error: ECONNRESET"
    assert failed.fields["signal"] == "error: econnreset"
    assert failed.fields["attempt"] == 1
    assert (run.step.last_error, run.step.errors) == ("error: ECONNRESET", ["error: ECONNRESET"])
    assert effects[0] == ReportOutcome("failed")


def test_a_failing_verifier_counts_as_a_failure():
    run = spawned(goal(), T0)
    run, _ = machine.advance(run, WorkerFinished(clean(), T0))
    refused = Attempt("c-1", False, "verifier out failed: missing", exited_clean=True)
    run, effects = machine.advance(run, Verified(refused, T0))
    assert kinds(effects) == ["ReportOutcome", "Record:STEP_FAILED", "BackOff"]
    assert (run.step.attempts, run.step.last_error) == (1, "verifier out failed: missing")


def test_a_step_keeps_its_last_ten_errors():
    run = goal(limit=50, floor=0)
    for n in range(1, 13):
        run, _ = fail(run, T0, n)
        if run.phase == "diagnosing":
            run, _ = machine.advance(run, answered(HookName.FAIL_DIAG, T0))
    assert len(run.step.errors) == machine.KEEP_ERRORS
    assert run.step.attempts == 12


# --- Hook D and block -------------------------------------------------------------------------
def test_hook_d_runs_from_the_third_failure_and_its_diagnosis_is_kept():
    run = goal(limit=5)
    for n in (1, 2):
        run, effects = fail(run, T0, n)
        assert RunHook(HookName.FAIL_DIAG) not in effects
    run, effects = fail(run, T0, 3)
    assert kinds(effects) == ["ReportOutcome", "Record:STEP_FAILED", "RunHook"]
    assert effects[-1] == RunHook(HookName.FAIL_DIAG)
    assert run.phase == "diagnosing"

    later = T0 + timedelta(minutes=2)
    long = "the network is down. " * 200
    run, effects = machine.advance(run, answered(HookName.FAIL_DIAG, later, text=long))
    assert kinds(effects) == ["Record:None", "BackOff"]
    assert effects[0].transition == transitions.diagnosis_kept()
    assert len(run.step.diagnosis) <= machine.DIAGNOSIS_CHARS
    assert run.step.diagnosis.startswith("the network is down.")
    assert effects[1].until == later + timedelta(seconds=effects[1].seconds)  # D's time


def test_a_failed_hook_d_keeps_no_diagnosis():
    run = goal(limit=5)
    for n in (1, 2, 3):
        run, _ = fail(run, T0, n)
    result = HookResult(hook="fail_diag", ran=True, error="engine down", final_text="half")
    run, effects = machine.advance(run, HookAnswered(HookName.FAIL_DIAG, result, T0, "half"))
    assert kinds(effects) == ["BackOff"]
    assert run.step.diagnosis == ""


def test_the_limit_blocks_the_goal_with_the_diagnosis_in_its_entry():
    run = goal(limit=3)
    for n in (1, 2, 3):
        run, _ = fail(run, T0, n)
    run, effects = machine.advance(run, answered(HookName.FAIL_DIAG, T0, text="flaky network"))
    assert kinds(effects) == ["Record:None", "BlockGoal"]
    block = effects[-1]
    assert isinstance(block, BlockGoal)
    assert block.reason == "step 1 “part 1” failed 3 times (limit 3)"
    assert block.diagnosis == "flaky network"
    assert isinstance(block.transition.state, transitions.Block)
    assert ("Hook D's diagnosis", "flaky network") in block.transition.state.blocks
    assert block.transition.state.details == ["no run log"]
    assert block.transition.fields["attempts"] == 3
    assert (run.phase, run.step.retry_after) == ("blocked", "")


def test_a_limit_below_three_blocks_without_hook_d():
    run = goal(limit=2)
    run, _ = fail(run, T0, 1)
    run, effects = fail(run, T0, 2)
    assert kinds(effects) == ["ReportOutcome", "Record:STEP_FAILED", "BlockGoal"]


def test_a_fatal_attempt_blocks_at_once_saying_why():
    run = spawned(goal(limit=5), T0)
    refused = Attempt("c-1", False, "cannot start the worker (nope):\nno such program", fatal=True)
    run, effects = machine.advance(run, WorkerFinished(refused, T0))
    assert kinds(effects) == ["ReportOutcome", "Record:STEP_FAILED", "BlockGoal"]
    assert effects[0] == ReportOutcome("fatal")
    assert effects[-1].reason.startswith("cannot run: cannot start the worker (nope):")
    assert "\n" not in effects[-1].reason
    assert run.phase == "blocked"


def test_a_run_log_is_named_in_the_block_entry():
    run = spawned(goal(limit=1), T0)
    attempt = Attempt("c-1", False, "boom", log_path=Path("/logs/c-1.log"))
    _, effects = machine.advance(run, WorkerFinished(attempt, T0))
    assert effects[-1].transition.state.details == ["last run log: /logs/c-1.log"]


# --- start-up and misuse ----------------------------------------------------------------------
def test_a_step_interrupted_by_a_stop_goes_back_to_pending_counting_the_attempt():
    run, _ = machine.advance(goal(), Started("c-9", "command", T0))
    run, effects = machine.advance(run, machine.Interrupted(T0))
    assert kinds(effects) == ["Record:STEP_INTERRUPTED"]
    step = run.step
    assert (step.status, step.attempts) == ("pending", 1)
    assert step.last_error == "interrupted: the daemon stopped during attempt 1 (c-9)"
    assert step.errors == [step.last_error]


def test_a_goal_found_with_every_step_done_is_recovered_as_completed():
    run = goal()
    run.step.status = "done"
    run.step.contract_id = "c-7"
    _, effects = machine.advance(run, machine.Recovered(T0))
    assert kinds(effects) == ["Record:GOAL_COMPLETED"]
    assert effects[0].transition.fields["recovered"] is True


@pytest.mark.parametrize(
    "event",
    [
        WorkerFinished(clean(), T0),
        Verified(Attempt("c-1", True), T0),
        HookAnswered(HookName.POST_RUN, None, T0),
        machine.Interrupted(T0),
        machine.Recovered(T0),  # a step is still to run: nothing to recover
    ],
)
def test_an_event_the_phase_does_not_expect_is_refused(event):
    with pytest.raises(machine.WrongEvent, match="in phase 'ready' of step 1"):
        machine.advance(goal(), event)


def test_a_second_start_while_running_is_refused():
    run = spawned(goal(), T0)
    with pytest.raises(machine.WrongEvent, match="Started in phase 'running'"):
        machine.advance(run, Started("c-2", "command", T0))


def test_a_start_after_an_attempt_left_in_progress_counts_that_attempt_first():
    # The iteration that started c-1 failed before its end was recorded: the state read
    # again holds the step in progress. It counts, so no failure repeats unbounded.
    left, _ = machine.advance(goal(limit=3), Started("c-1", "command", T0))
    again = StepRun(left.active, 1, left.policy)  # a new iteration: phase "ready"
    run, effects = machine.advance(again, Started("c-2", "command", T0))
    assert kinds(effects) == ["Record:STEP_INTERRUPTED", "Record:STEP_STARTED", "RunHook"]
    assert (run.step.attempts, run.step.contract_id, run.phase) == (1, "c-2", "packing")


def test_a_start_at_the_limit_blocks_the_goal_and_runs_nothing():
    run = goal(limit=2)
    run, _ = fail(run, T0, 1)
    left, _ = machine.advance(run, Started("c-2", "command", T0))  # its end never recorded
    run, effects = machine.advance(
        StepRun(left.active, 1, left.policy), Started("c-3", "command", T0)
    )
    assert kinds(effects) == ["Record:STEP_INTERRUPTED", "BlockGoal"]
    assert effects[-1].reason == "step 1 “part 1” failed 2 times (limit 2)"
    assert (run.phase, run.step.attempts) == ("blocked", 2)
    # A restart that finds the step already at its limit blocks it too, without a start.
    stopped = goal(limit=1)
    stopped.step.attempts = 1
    run, effects = machine.advance(stopped, Started("c-4", "command", T0))
    assert kinds(effects) == ["BlockGoal"] and run.phase == "blocked"


@pytest.mark.parametrize(
    ("attempts", "wait"), [(0, 0), (1, 30), (2, 60), (3, 120), (6, 960), (7, 1800), (99, 1800)]
)
def test_the_machines_wait_doubles_from_the_floor_up_to_the_ceiling(attempts, wait):
    assert machine.Policy(limit=3, backoff_floor=30, backoff_ceiling=1800).backoff(attempts) == wait


def test_a_zero_floor_means_no_wait():
    assert machine.Policy(limit=3, backoff_floor=0, backoff_ceiling=1800).backoff(5) == 0
