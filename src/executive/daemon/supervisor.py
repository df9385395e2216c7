"""The supervisor: one anyio task group around the executive loop.

Children: the loop, a signal watcher, the scheduler, a watchdog heartbeat and whatever
services the executive brings (the control socket). Signals:

* SIGTERM / SIGINT: stop taking work; the running iteration may finish within the grace
  period, then it is cancelled. A second signal cancels at once. Exit code 0.
* SIGUSR2: finish the running iteration (however long it takes), then exit 0, so PM2
  restarts the process on new code.

An iteration that raises is logged and the loop goes on; from
``EXECUTIVE_UNHEALTHY_AFTER_FAILURES`` failures in a row the daemon reports itself unhealthy
(``/healthz``, ``executive status``) with the last error, until an iteration succeeds.
``run --once`` exits 1 when its one iteration failed.
"""

from __future__ import annotations

import os
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import anyio
from anyio import CancelScope
from anyio.abc import TaskGroup, TaskStatus
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from executive import __version__
from executive.daemon.notify import Notifier
from executive.daemon.schedule import Job, next_runs, start_scheduler
from executive.daemon.status import hook_states
from executive.dates import now_iso
from executive.files import write_json
from executive.home import Home
from executive.logs import bound, get_logger
from executive.loop.executive import Executive, Pace
from executive.observe import Observer
from executive.redact import scrub
from executive.settings import Settings
from executive.untrusted import one_line
from executive.workspace import spending

log = get_logger(__name__)

_RECENT = 10
# Enough of an error to act on; an exception's text may quote whatever raised it.
_ERROR_CHARS = 500
_IDLE_REPORT_SECONDS = 300
# How often the heartbeat tells the observer the event loop is alive.
_ALIVE_SECONDS = 15.0


def idle_report_every(idle_sleep_seconds: float) -> int:
    """How many idle ticks make about five minutes."""
    return max(1, round(_IDLE_REPORT_SECONDS / max(idle_sleep_seconds, 1)))


class Service(Protocol):
    """A child that serves until cancelled (the control socket, the dashboard). It calls
    ``task_status.started()`` once it answers, or once it has given up on its own: READY
    waits for every service, and a service that cannot start is its failure, not the
    daemon's."""

    def __call__(self, *, task_status: TaskStatus[None]) -> Awaitable[None]: ...


class Supervisor:
    def __init__(
        self,
        executive: Executive,
        settings: Settings,
        *,
        jobs: Sequence[Job] = (),
        services: Sequence[Service] = (),
        notifier: Notifier | None = None,
        warmup: Callable[[], Awaitable[dict[str, object]]] | None = None,
        after_iteration: Sequence[Callable[[], Awaitable[object]]] = (),
        observer: Observer | None = None,
        settle: Callable[[], int] | None = None,
    ) -> None:
        self._executive = executive
        self._settle = settle
        self._jobs = list(jobs)
        self._services = list(services)
        self._settings = settings
        self._home = Home(settings.home)
        self._notifier = notifier or Notifier()
        self.observer = observer or Observer()
        self._stopping = anyio.Event()
        self._stop_reason = ""
        self._signals_seen = 0
        self._recent: deque[dict[str, object]] = deque(maxlen=_RECENT)
        self._started_at = now_iso()
        self._warmup = warmup
        self._scheduler: AsyncIOScheduler | None = None
        self._started_monotonic = time.monotonic()
        self._after_iteration = list(after_iteration)
        self._idle_streak = 0

    async def run_once(self) -> int:
        """One iteration, then exit (for cron and tests)."""
        log.info("daemon.starting", mode="once", pid=os.getpid(), home=str(self._home.root))
        await self._executive.start()
        try:
            pace = await self._iterate(1)
        finally:
            with anyio.CancelScope(shield=True):
                await self._executive.close()
        failed = pace is Pace.FAILED
        log.info("daemon.stopped", mode="once", iteration_failed=failed)
        return 1 if failed else 0

    async def run(self) -> int:
        log.info("daemon.starting", mode="loop", pid=os.getpid(), home=str(self._home.root))
        try:
            async with anyio.create_task_group() as tg:
                # Signals first: a stop during a slow start-up is still a clean stop.
                await tg.start(self._watch_signals, tg)
                await self._executive.start()
                # READY means serving: with memory on, that includes an open store.
                store = await self._warmup() if self._warmup else {}
                self._scheduler = start_scheduler(self._jobs, self._settings.tz)
                for service in self._services:
                    # Started, not only scheduled: a client told READY finds the socket.
                    await tg.start(service)
                tg.start_soon(self._heartbeat)
                # Start-up is over: what it built stays (daemon/heap.py).
                heap = {"frozen_objects": self._settle()} if self._settle else {}
                self._notifier.ready("looking for work")
                log.info(
                    "daemon.ready",
                    version=__version__,
                    hooks={
                        hook: state["reason"] for hook, state in hook_states(self._settings).items()
                    },
                    store=store,
                    jobs=self._next_jobs(),
                    **heap,
                )
                await self._loop()
                tg.cancel_scope.cancel()
        finally:
            if self._scheduler is not None and self._scheduler.running:
                self._scheduler.shutdown(wait=False)
            self._notifier.stopping()
            with anyio.CancelScope(shield=True), anyio.move_on_after(30):
                await self._executive.close()
            log.info("daemon.stopped", reason=self._stop_reason or "loop ended")
        return 0

    def snapshot(self) -> dict[str, object]:
        """The running process as ``executive status`` shows it (no store access)."""
        return {
            "pid": os.getpid(),
            "version": __version__,
            "started_at": self._started_at,
            "uptime_seconds": round(time.monotonic() - self._started_monotonic),
            "stopping": self._stopping.is_set(),
            "jobs": self._next_jobs(),
            "recent_iterations": list(self._recent),
            "health": self.health(),
        }

    def _next_jobs(self) -> dict[str, str]:
        """Each scheduled job's next run, as the scheduler has it now (a job that ran moved on)."""
        scheduler = self._scheduler
        return next_runs(scheduler) if scheduler is not None and scheduler.running else {}

    def health(self) -> dict[str, object]:
        observer = self.observer
        failing = observer.failing(self._settings.unhealthy_after_failures)
        last = observer.last_failure
        detail = failing or "ok"
        if failing is None and observer.failed_in_a_row and last is not None:
            detail = f"ok ({observer.failed_in_a_row} failed in a row; last: {last.error})"
        degraded = observer.degraded()
        if degraded and failing is None:
            detail += "; degraded: " + "; ".join(f"{k}: {v}" for k, v in degraded.items())
        pause = spending.budget_of(self._settings).paused()
        if pause is not None:  # healthy: the cap does its work; paid work waits until then
            detail += "; " + pause.describe()
        return {
            "ok": failing is None,
            "detail": detail,
            "failed_in_a_row": observer.failed_in_a_row,
            # Parts that failed while the loop works (a dashboard that cannot bind).
            "degraded": degraded,
        }

    async def _loop(self) -> None:
        number = 0
        while not self._stopping.is_set():
            number += 1
            pace = await self._iterate(number)
            self._report_idle(pace)
            delay = {
                Pace.BUSY: 0.0,
                Pace.IDLE: self._settings.idle_sleep_seconds,
                Pace.UNHEALTHY: self._settings.unhealthy_sleep_seconds,
                Pace.FAILED: self._settings.idle_sleep_seconds,
            }[pace]
            if delay:
                with anyio.move_on_after(delay):
                    await self._stopping.wait()
            else:
                await anyio.lowlevel.checkpoint()

    async def _iterate(self, number: int) -> Pace:
        started = time.monotonic()
        self.observer.iteration_started(number)
        error: str | None = None
        with bound(iteration=number):
            try:
                pace = await self._executive.iterate(number)
            except Exception as exc:
                # Nothing in an iteration may end the process: log with context, pause, go on.
                log.exception("iteration.failed", error=repr(exc))
                pace = Pace.FAILED
                error = scrub(one_line(f"{type(exc).__name__}: {exc}"))[:_ERROR_CHARS]
            duration_ms = round((time.monotonic() - started) * 1000)
            log.debug("iteration.finished", pace=pace.value, duration_ms=duration_ms)
            for follow_up in self._after_iteration:
                try:
                    await follow_up()
                except Exception as exc:
                    # Book-keeping after the work (git commits) never stops the loop.
                    log.exception("iteration.follow_up_failed", error=repr(exc))
        self.observer.iteration_finished(number, pace.value, duration_ms, error)
        self._record(number, pace, duration_ms, error)
        return pace

    def _report_idle(self, pace: Pace) -> None:
        """A ``loop.idle`` line on the first idle tick and every few minutes after.

        Without it a quiet daemon and a stuck one look the same in the log. Counted in
        ticks, not measured in time, so the cadence is the same on a busy machine.
        """
        if pace is not Pace.IDLE:
            self._idle_streak = 0
            return
        if self._idle_streak % idle_report_every(self._settings.idle_sleep_seconds) == 0:
            log.info(
                "loop.idle",
                idle_ticks=self._idle_streak,
                queue=self._home.queue_counts(),
                next_jobs=self._next_jobs(),
            )
        self._idle_streak += 1

    def _record(self, number: int, pace: Pace, duration_ms: int, error: str | None) -> None:
        self._recent.append(
            {
                "iteration": number,
                "finished_at": now_iso(),
                "pace": pace.value,
                "duration_ms": duration_ms,
                **({"error": error} if error is not None else {}),
            }
        )
        try:
            # The files' view of `executive status` (its recent iterations and health).
            write_json(self._home.status_file, self.snapshot(), mode=0o600)
        except OSError as exc:
            log.warning("status.write_failed", path=str(self._home.status_file), error=str(exc))

    async def _watch_signals(
        self, tg: TaskGroup, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGUSR2) as signals:
            # Handlers are installed: only now may readiness be announced.
            task_status.started()
            async for signum in signals:
                self._signals_seen += 1
                name = signal.Signals(signum).name
                if self._signals_seen > 1:
                    log.warning("shutdown.forced", signal=name)
                    self._stop_reason = f"{name} (second signal)"
                    tg.cancel_scope.cancel()
                    return
                self._notifier.stopping()
                self._stopping.set()
                self.observer.stopping = True
                if signum == signal.SIGUSR2:
                    self._stop_reason = "SIGUSR2 (restart after the iteration)"
                    log.info("shutdown.requested", signal=name, grace_seconds=None)
                    continue
                self._stop_reason = name
                grace = self._settings.shutdown_grace_seconds
                log.info("shutdown.requested", signal=name, grace_seconds=grace)
                tg.start_soon(self._cancel_after, grace, tg.cancel_scope)

    async def _cancel_after(self, grace: float, scope: CancelScope) -> None:
        await anyio.sleep(grace)
        log.warning("shutdown.grace_expired", grace_seconds=grace)
        scope.cancel()

    async def _heartbeat(self) -> None:
        # The heartbeat proves the event loop is alive even while a long iteration runs (a
        # worker may take 45 minutes; WatchdogSec is 90 s): to systemd (WATCHDOG=1, one ping
        # per half interval at most, as sd_watchdog_enabled(3) advises; this is its only
        # sender) and to the observer, where a beat during a worker's run is progress
        # (/metrics' executive_seconds_without_progress, the ExecutiveLoopStalled alert).
        interval = self._notifier.watchdog_seconds
        watchdog = self._notifier.enabled and interval is not None
        period = min(interval / 2, _ALIVE_SECONDS) if watchdog and interval else _ALIVE_SECONDS
        while True:
            await anyio.sleep(period)
            self.observer.alive()
            if watchdog:
                self._notifier.watchdog()
