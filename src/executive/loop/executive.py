"""The executive: one iteration of the loop at a time.

ingest the queue ── select work ──(work?)── Hook A (audit only)
                       │ no → idle: retrospective due? → write it → Hook E
                       ▼
the step's attempt: :mod:`executive.loop.machine` decides (Hook B, spawn, verify, Hook C or
D, back off or block); this module carries out what it decides, and feeds back what happened.
"""

from __future__ import annotations

import enum
import secrets
import time
from contextlib import AsyncExitStack, nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from executive.corpus import backfill
from executive.files import UnsafeFile
from executive.home import Home
from executive.hooks.context import HookContext, WorkItem
from executive.hooks.result import HookResult
from executive.hooks.runner import HookEnv, run_memory_hook
from executive.hookspecs import SPECS, HookName
from executive.logs import bound, get_logger
from executive.loop import budget, contexts, machine, retro, transitions
from executive.loop import step as steps
from executive.loop.attempt import Attempt
from executive.memory.runtime import MemoryRuntime
from executive.observe import Observer
from executive.redact import redactor, scrub
from executive.settings import Settings
from executive.untrusted import clip, one_line
from executive.workers import isolation
from executive.workers.isolation import reap_orphans
from executive.workspace import operator
from executive.workspace.bundle import Bundle
from executive.workspace.ledger import WorkLedger
from executive.workspace.lifecycle import Active, Workspace
from executive.workspace.spending import budget_of
from executive.workspace.state import LOG_FILE, STATE_FILE, StateError

log = get_logger(__name__)


class Pace(enum.Enum):
    """What one iteration tells the supervisor about when to run the next."""

    BUSY = "busy"  # work was done: go on at once
    IDLE = "idle"  # nothing to do: sleep IDLE_SLEEP_SECONDS
    UNHEALTHY = "unhealthy"  # health check failed: sleep UNHEALTHY_SLEEP_SECONDS
    FAILED = "failed"  # the iteration raised: pause IDLE_SLEEP_SECONDS, then go on


class Executive:
    def __init__(
        self,
        settings: Settings,
        memory: MemoryRuntime,
        hook_env: HookEnv | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.settings = settings
        self.home = Home(settings.home)
        self.memory = memory
        self.ledger = WorkLedger(self.home.work_ledger)
        self.workspace = Workspace(
            self.home,
            settings.worker_vendor,
            settings.breakdown_threshold_turns,
            max_prompt_bytes=settings.bundle_prompt_max_bytes,
        )
        self.recorder = transitions.Recorder(self.workspace, self.ledger)
        # The ledger as the idle path and Hook A need it, read on from where they stopped.
        self._outcomes = retro.Outcomes(self.ledger)
        self._recent = contexts.Recent(self.ledger)
        # What was spent, read off the ledger: the day's and the bundles' caps.
        self.budget = budget_of(settings)  # the one this process's status and dashboard read
        self._day = budget.DayGate(self.budget, settings)
        self.hook_env = hook_env or HookEnv(
            settings, memory, self.ledger, observer=observer, budget=self.budget
        )
        self.observer = observer
        self._specs_synced: tuple[float, ...] | None = None

    # --- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Crash recovery: end orphaned workers, return interrupted steps to pending, and
        complete the goals whose last step was done when the daemon stopped."""
        self.home.ensure()
        try:
            iso = isolation.from_settings(self.settings)
        except isolation.IsolationUnavailable:
            iso = None  # no worker can run; every attempt says why
        for contract in reap_orphans(self.home.pids, iso):
            self.ledger.append("WORKER_ORPHAN_ENDED", contract_id=contract)
        for active in self.workspace.active():
            try:
                self._recover(active)
            except UnsafeFile as exc:  # a planted link or FIFO must not stop start-up
                self.workspace.quarantine(active.bundle.folder, str(exc), file=LOG_FILE)

    def _recover(self, active: Active) -> None:
        """Each step the daemon stopped during is an interruption, and a goal with nothing
        left to run is recovered: events of the step machine, whose records this keeps."""
        for step in active.state.steps:
            if step.status == "in_progress":
                active = self._recovered(active, step.number, machine.Interrupted)
        steps = active.state.steps
        if steps and active.state.next_step() is None:
            self._recovered(active, steps[-1].number, machine.Recovered)

    def _recovered(
        self, active: Active, number: int, event: type[machine.Interrupted | machine.Recovered]
    ) -> Active:
        run = machine.StepRun(active, number, self._policy(active.bundle))
        run, effects = machine.advance(run, event(datetime.now(UTC)))
        for effect in effects:
            assert isinstance(effect, machine.Record)  # recovery only records
            self.recorder.record(run.active, effect.transition)
        return run.active

    async def close(self) -> None:
        await self.memory.close()

    # --- one iteration --------------------------------------------------------------------------
    async def iterate(self, number: int) -> Pace:
        # The operator's cancels first: the daemon alone moves queued bundles while it runs.
        operator.apply_requests(self.home)
        self.workspace.ingest()
        active = self.workspace.active()  # parsed once per iteration: selection and Hook A
        # Under the day's pause only unpaid (command) bundles may start.
        pick = self.workspace.select(self._day.startable(active))
        if pick is None:
            await self._idle()
            return Pace.IDLE
        await self._sync_principles()
        with bound(bundle=pick.bundle.slug):
            # Hook A only when work is queued (the original's idle-burn fix); audit only.
            queued = [
                contexts.work_item(a, self.home.root, steps.output_dir(self.settings, a.bundle))
                for a in active
            ]
            with bound(hook=HookName.PRE_WORK.value):  # a failed build names its hook
                told = contexts.pre_work(queued, pick.bundle.slug, self._recent)
            await self._hook(HookName.PRE_WORK, told)
            try:
                await self._run_step(pick)
            except (UnsafeFile, StateError) as exc:
                # Its own files went bad under it (a link, a FIFO, a torn state): this bundle
                # is quarantined, so the next iteration runs the others instead of failing.
                # (A full disk is not the bundle's fault: that OSError still fails the
                # iteration, and the bundle runs again when there is room.)
                log.exception("step.bundle_unusable", error=repr(exc))
                culprit = LOG_FILE if LOG_FILE in str(exc) else STATE_FILE
                self.workspace.quarantine(pick.bundle.folder, str(exc), file=culprit)
        return Pace.BUSY

    async def _sync_principles(self) -> None:
        """Keep the constitution's rules in memory as principles, so packs carry them: backfill
        lane A when the constitution (or a spec file) changed and Hook B is on, only on
        iterations with work, so an idle loop touches no store."""
        s = self.settings
        if s.hook_off(SPECS[HookName.PRE_SPAWN].flag) is not None:
            return
        files = [self.home.constitution, *(self.home.root / f for f in s.spec_file_list)]
        stamp = tuple(f.stat().st_mtime if f.exists() else 0.0 for f in files)
        if stamp == self._specs_synced:
            return
        try:
            report = await backfill.run(
                await self.memory.harvester(),
                await self.memory.view(),
                self.home,
                self.ledger,
                lanes=("A",),
                spec_files=s.spec_file_list,
            )
        except Exception as exc:
            log.exception("principles.sync_failed", error=repr(exc))
            return
        self._specs_synced = stamp
        lane = report["lanes"].get("A", {})
        log.info("principles.synced", **{k: lane.get(k) for k in ("written", "skipped", "pruned")})

    async def _idle(self) -> None:
        is_due = retro.due(
            self._outcomes,
            after_outcomes=self.settings.retro_after_outcomes,
            interval_days=self.settings.retro_interval_days,
        )
        if is_due is None:
            return
        document = retro.build(self.ledger, is_due.since)
        path = retro.write(self.home, document)
        rel = str(path.relative_to(self.home.root))
        written = {"path": rel, "outcomes": is_due.outcomes, "lessons": len(document.lessons)}
        self.ledger.append("RETRO_WRITTEN", **written)
        log.info("retro.written", **written)
        with bound(hook=HookName.POST_RETRO.value):  # a failed build names its hook
            told = retro.hook_context(rel, document, self.ledger, is_due.since)
        await self._hook(HookName.POST_RETRO, told)

    async def _run_step(self, active: Active) -> None:
        """Run the next step's attempt: the machine decides, this carries out its effects."""
        step = active.state.next_step()
        assert step is not None
        over = budget.bundle_block(self.budget, active)
        if over is not None:
            self.recorder.record(active, over)
            return
        vendor = active.bundle.vendor(self.settings.worker_vendor)
        # Unique on this machine, not only in this daemon: at the end of a run every process
        # carrying its contract id is ended, and several executives may share a host.
        contract_id = f"contract-{int(time.time() * 1000)}-{secrets.token_hex(4)}"
        run = machine.StepRun(active, step.number, self._policy(active.bundle))
        event: machine.Event | None = machine.Started(contract_id, vendor, datetime.now(UTC))
        item = contexts.work_item(
            active, self.home.root, steps.output_dir(self.settings, active.bundle)
        )
        # The worker's egress route, open while it and its verifiers run (closed on any error).
        async with AsyncExitStack() as route:
            worker = _Worker(item, route)
            while event is not None:
                run, effects = machine.advance(run, event)
                if not run.worker_busy:
                    await route.aclose()  # before anything is recorded, as the attempt ends
                event = None
                for effect in effects:
                    event = await self._carry_out(run, worker, effect) or event

    async def _carry_out(
        self, run: machine.StepRun, worker: _Worker, effect: machine.Effect
    ) -> machine.Event | None:
        """One effect; the event it produced, if any (each ``advance`` asks for at most one).
        Whatever goes wrong carrying out an attempt (preparing, spawning, reading what the
        worker left, verifying, a hook) is an event: a failed attempt, counted, backed off and
        blocked at the limit, never a failed iteration that would start the same worker again.
        Only recording (the bundle's own files) raises."""
        if isinstance(effect, machine.Record):
            self.recorder.record(run.active, effect.transition)
            return None
        try:
            return await self._effect(run, worker, effect)
        except Exception as exc:
            log.exception(
                "step.effect_failed",
                effect=type(effect).__name__,
                contract_id=run.step.contract_id,
                error=repr(exc),
            )
            return _failed(run, effect, exc)

    async def _effect(
        self, run: machine.StepRun, worker: _Worker, effect: machine.Effect
    ) -> machine.Event | None:
        match effect:
            case machine.ReportOutcome(outcome=outcome):
                if self.observer is not None:
                    self.observer.worker_finished(outcome)
            case machine.RunHook(hook=hook):
                with bound(hook=hook.value):  # a failed build names its hook
                    told = contexts.of_step(hook, run, worker.item, self.ledger)
                result = await self._hook(hook, told)
                text = redactor().scrub(result.final_text) if result is not None else ""
                return machine.HookAnswered(hook, result, datetime.now(UTC), text)
            case machine.Prepare():
                return await self._prepare(run, worker, effect)
            case machine.Route():
                assert worker.prepared is not None  # routing follows preparing
                routed = await steps.open_route(
                    self.settings, self.home, worker.prepared, worker.route
                )
                if isinstance(routed, Attempt):
                    return machine.WorkerFinished(routed, datetime.now(UTC))
                worker.prepared = routed
                return machine.RouteOpened(datetime.now(UTC))
            case machine.Spawn(pack=pack):
                attempt = await self._spawn(run, worker)
                attempt = budget.over_run_cap(attempt, self.settings.budget_run_usd, pack)
                return machine.WorkerFinished(attempt, datetime.now(UTC))
            case machine.Verify(attempt=attempt):
                assert worker.prepared is not None  # verifying follows a clean spawn
                verified = await steps.verify(run.active.bundle, worker.prepared, attempt)
                return machine.Verified(verified, datetime.now(UTC))
        return None

    async def _prepare(
        self, run: machine.StepRun, worker: _Worker, prepare: machine.Prepare
    ) -> machine.Event:
        bundle, step, contract_id = run.active.bundle, run.step, run.step.contract_id
        if self.observer is not None:
            self.observer.spawned(
                contract_id=contract_id,
                bundle=bundle.slug,
                step=step.number,
                step_title=step.title,
                attempt=step.attempts + 1,
                result=prepare.packed,
            )
        prepared = await steps.prepare(
            settings=self.settings,
            home=self.home,
            bundle=bundle,
            step=step,
            vendor=run.vendor,
            contract_id=contract_id,
            pack=prepare.pack,
        )
        if isinstance(prepared, Attempt):
            return machine.WorkerFinished(prepared, datetime.now(UTC))
        worker.prepared = prepared
        return machine.WorkerPrepared(datetime.now(UTC))

    async def _spawn(self, run: machine.StepRun, worker: _Worker) -> Attempt:
        assert worker.prepared is not None  # spawning follows routing
        bundle = run.active.bundle
        limit = bundle.spec.timeout_seconds or self.settings.worker_timeout_ms / 1000
        waiting = self.observer.waiting_on_worker(limit) if self.observer else nullcontext()
        with waiting:
            return await steps.spawn(self.settings, self.home, bundle, worker.prepared)

    def _policy(self, bundle: Bundle) -> machine.Policy:
        return machine.Policy(
            limit=bundle.spec.max_attempts or self.settings.max_retries,
            backoff_floor=self.settings.retry_backoff_seconds,
            backoff_ceiling=self.settings.retry_backoff_max_seconds,
        )

    async def _hook(self, name: HookName, context: HookContext | None) -> HookResult | None:
        """Run the hook (no context: building it failed, already logged); never stops the loop."""
        if context is None:
            return None
        try:
            return await run_memory_hook(name, context, self.hook_env)
        except Exception as exc:  # the runner never raises; if it ever did, not past here
            log.exception("hook.run_failed", hook=name.value, error=repr(exc))
            return None


def _failed(run: machine.StepRun, effect: machine.Effect, exc: Exception) -> machine.Event | None:
    """The event an effect that raised stands for: its attempt failed, its hook did not run."""
    now = datetime.now(UTC)
    why = f"the daemon could not carry out the attempt: {type(exc).__name__}: {exc}"
    why = clip(scrub(one_line(why)), steps.ERROR_CHARS)
    match effect:
        case machine.RunHook(hook=hook):
            return machine.HookAnswered(hook, None, now)
        case machine.Prepare() | machine.Route() | machine.Spawn():
            return machine.WorkerFinished(Attempt(run.step.contract_id, False, why), now)
        case machine.Verify(attempt=attempt):
            return machine.Verified(replace(attempt, passed=False, error=why), now)
    return None  # a report to the observer: nothing of the step depends on it


@dataclass
class _Worker:
    """What carrying out one attempt's effects holds between them."""

    item: WorkItem  # the goal as the hooks' contexts quote it
    route: AsyncExitStack  # the worker's egress route, while it is open
    prepared: steps.Prepared | None = None  # the worker, once prepared and routed
