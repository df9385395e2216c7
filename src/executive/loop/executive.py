"""The executive: one iteration of the loop at a time.

ingest the queue ── select work ──(work?)── Hook A (audit only)
                       │ no → idle: retrospective due? → write it → Hook E
                       ▼
Hook B (pack) → worker CLAUDE.md → spawn → verifiers
                       ▼
pass → update state → Hook C │ fail → count → Hook D from the 3rd → block after the limit
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from executive.corpus import backfill
from executive.files import UnsafeFile
from executive.home import Home
from executive.hooks.context import HookContext, PostRetroContext, WorkItem
from executive.hooks.result import HookResult
from executive.hooks.runner import HookEnv, run_memory_hook
from executive.hookspecs import SPECS, HookName
from executive.logs import bound, get_logger
from executive.loop import contexts, retro, transitions
from executive.loop import step as steps
from executive.loop.pace import Pace
from executive.memory.runtime import MemoryRuntime
from executive.observe import Observer
from executive.redact import redactor
from executive.settings import Settings
from executive.untrusted import one_line, opening
from executive.workers import sandbox
from executive.workers.process import reap_orphans
from executive.workspace import operator
from executive.workspace.bundle import Bundle
from executive.workspace.ledger import WorkLedger
from executive.workspace.lifecycle import Active, Workspace
from executive.workspace.needs_you import error_tail
from executive.workspace.signals import root_signal
from executive.workspace.state import (
    LOG_FILE,
    STATE_FILE,
    StateError,
    StepState,
    backoff_seconds,
    now_iso,
)

log = get_logger(__name__)

FAIL_DIAG_FROM = 3
DIAGNOSIS_CHARS = 2500
KEEP_ERRORS = 10


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
        self.hook_env = hook_env or HookEnv(settings, memory, self.ledger, observer=observer)
        self.observer = observer
        self._specs_synced: tuple[float, ...] | None = None

    # --- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Crash recovery: end orphaned workers, return interrupted steps to pending, and
        complete the goals whose last step was done when the daemon stopped."""
        self.home.ensure()
        try:
            iso = sandbox.from_settings(self.settings)
        except sandbox.IsolationUnavailable:
            iso = None  # no worker can run; every attempt says why
        for contract in reap_orphans(self.home.pids, iso):
            self.ledger.append("WORKER_ORPHAN_ENDED", contract_id=contract)
        for active in self.workspace.active():
            try:
                self._recover(active)
            except UnsafeFile as exc:  # a planted link or FIFO must not stop start-up
                self.workspace.quarantine(active.bundle.folder, str(exc), file=LOG_FILE)

    def _recover(self, active: Active) -> None:
        steps = active.state.steps
        for step in steps:
            if step.status != "in_progress":
                continue
            step.status = "pending"
            step.attempts += 1
            step.last_error = f"interrupted: the daemon stopped during attempt {step.attempts} ({step.contract_id})"
            step.errors = [*step.errors, step.last_error][-KEEP_ERRORS:]
            self.recorder.record(active, transitions.interrupted(active.bundle, step))
        if steps and active.state.next_step() is None:
            # Stopped between the last step's record and the goal's (Hook C runs there):
            # nothing is left to run, and selection never picks a bundle with no next step.
            completed = transitions.goal_completed(active, steps[-1].contract_id, recovered=True)
            self.recorder.record(active, completed)

    async def close(self) -> None:
        await self.memory.close()

    # --- one iteration --------------------------------------------------------------------------
    async def iterate(self, number: int) -> Pace:
        # The operator's cancels first: the daemon alone moves queued bundles while it runs.
        operator.apply_requests(self.home)
        self.workspace.ingest()
        active = self.workspace.active()  # parsed once per iteration: selection and Hook A
        pick = self.workspace.select(active)
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
            await self._hook(
                HookName.PRE_WORK,
                lambda: contexts.pre_work(queued, pick.bundle.slug, self._recent),
            )
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
        """Keep the constitution's rules in memory as principles, so packs can carry them.

        Backfill lane A, run when the constitution (or a spec file) changed and Hook B, the
        pack, is on; only on iterations with work, so an idle loop touches no store.
        """
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
        log.info(
            "principles.synced",
            written=lane.get("written"),
            skipped=lane.get("skipped"),
            pruned=lane.get("pruned"),
        )

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
        self.ledger.append(
            "RETRO_WRITTEN", path=rel, outcomes=is_due.outcomes, lessons=len(document.lessons)
        )
        log.info("retro.written", path=rel, outcomes=is_due.outcomes, lessons=len(document.lessons))
        await self._hook(
            HookName.POST_RETRO,
            lambda: PostRetroContext(
                retro_path=rel,
                retro_type="weekly",
                related_bundle_slugs=retro.related(document),
                harvest_run=f"{document.date}-retro-weekly",
                experiences=contexts.run_experiences(self.ledger, is_due.since),
            ),
        )

    async def _run_step(self, active: Active) -> None:
        bundle, state = active.bundle, active.state
        step = state.next_step()
        assert step is not None
        vendor = bundle.vendor(self.settings.worker_vendor)
        # Unique on this machine, not only in this daemon: at the end of a run every process
        # carrying its contract id is ended, and several executives may share a host.
        contract_id = f"contract-{int(time.time() * 1000)}-{secrets.token_hex(4)}"
        item = contexts.work_item(active, self.home.root, steps.output_dir(self.settings, bundle))
        if not state.started_at:
            state.started_at = now_iso()
            self.recorder.record(active, transitions.goal_started(bundle, state.priority))
        step.status, step.contract_id, step.started_at = "in_progress", contract_id, now_iso()
        self.recorder.record(active, transitions.step_started(bundle, step, contract_id, vendor))

        packed = await self._hook(
            HookName.PRE_SPAWN, lambda: contexts.pre_spawn(item, step, vendor)
        )
        pack = packed.memory_pack if packed is not None and packed.outcome == "ok" else None
        if self.observer is not None:
            self.observer.spawned(
                contract_id=contract_id,
                bundle=bundle.slug,
                step=step.number,
                step_title=step.title,
                attempt=step.attempts + 1,
                result=packed,
            )
        attempt = await steps.attempt(
            settings=self.settings,
            home=self.home,
            bundle=bundle,
            step=step,
            vendor=vendor,
            contract_id=contract_id,
            pack=pack,
        )
        step.finished_at, step.duration_seconds = now_iso(), round(attempt.duration_seconds, 3)
        if self.observer is not None:
            self.observer.worker_finished(
                "passed" if attempt.passed else "fatal" if attempt.fatal else "failed"
            )
        if attempt.passed:
            await self._passed(active, step, item, vendor, attempt)
        else:
            await self._failed(active, step, item, vendor, attempt)

    async def _passed(
        self, active: Active, step: StepState, item: WorkItem, vendor: str, attempt: steps.Attempt
    ) -> None:
        bundle, state = active.bundle, active.state
        step.status = "done"
        self.recorder.record(active, transitions.step_completed(bundle, step, attempt))
        await self._hook(
            HookName.POST_RUN,
            lambda: contexts.post_run(
                item,
                step,
                vendor,
                attempt.results,
                contract_id=attempt.contract_id,
                output_changed=attempt.output_changed,
                experience=attempt.experience,
            ),
        )
        if state.next_step() is None:
            self.recorder.record(active, transitions.goal_completed(active, attempt.contract_id))

    async def _failed(
        self, active: Active, step: StepState, item: WorkItem, vendor: str, attempt: steps.Attempt
    ) -> None:
        bundle = active.bundle
        step.status = "pending"
        step.attempts += 1
        step.last_error = attempt.error
        step.errors = [*step.errors, attempt.error[-500:]][-KEEP_ERRORS:]
        signal = root_signal(attempt.error)
        self.recorder.record(active, transitions.step_failed(bundle, step, attempt, signal))
        if step.attempts >= FAIL_DIAG_FROM:
            diagnosed = await self._hook(
                HookName.FAIL_DIAG,
                lambda: contexts.fail_diag(
                    item, step, vendor, self.ledger, self._limit(bundle), attempt.experience
                ),
            )
            if diagnosed is not None and diagnosed.outcome == "ok" and diagnosed.final_text:
                # Whole, from its start (a person reads it in needs-you and bundle show).
                step.diagnosis = opening(redactor().scrub(diagnosed.final_text), DIAGNOSIS_CHARS)
                self.workspace.save(active)
        if attempt.fatal or step.attempts >= self._limit(bundle):
            step.retry_after = ""  # blocked: nothing waits for a time any more
            reason = (
                f"cannot run: {one_line(attempt.error)[:300]}"
                if attempt.fatal
                else f"step {step.number} “{step.title}” failed {step.attempts} times (limit {self._limit(bundle)})"
            )
            block = transitions.Block(
                reason,
                [f"last run log: {attempt.log_path}" if attempt.log_path else "no run log"],
                [
                    ("Last error (its last lines)", error_tail(attempt.error)),
                    ("Hook D's diagnosis", step.diagnosis),
                ],
            )
            self.recorder.record(
                active, transitions.goal_blocked(bundle, step, attempt.contract_id, block)
            )
            return
        delay = backoff_seconds(
            step.attempts,
            self.settings.retry_backoff_seconds,
            self.settings.retry_backoff_max_seconds,
        )
        if delay:
            step.retry_after = (datetime.now(UTC) + timedelta(seconds=delay)).isoformat()
            self.recorder.record(active, transitions.retry_scheduled(step, delay))

    def _limit(self, bundle: Bundle) -> int:
        return bundle.spec.max_attempts or self.settings.max_retries

    async def _hook(self, name: HookName, build: Callable[[], HookContext]) -> HookResult | None:
        """Build the context and run the hook; nothing here may stop the loop."""
        try:
            context = build()
            # Contexts quote goals, errors and verifier evidence: redacted before any engine
            # (and so memory) sees them.
            context = type(context).model_validate(redactor().value(context.model_dump()))
        except Exception as exc:
            log.exception("hook.context_failed", hook=name.value, error=repr(exc))
            return None
        return await run_memory_hook(name, context, self.hook_env)
