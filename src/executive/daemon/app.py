"""The composition root: settings in, a running supervisor out."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial

from apscheduler.triggers.interval import IntervalTrigger

from executive import redact
from executive.daemon.notify import Notifier
from executive.daemon.schedule import Job, daily
from executive.daemon.supervisor import Supervisor
from executive.daemon.surface import build_surface
from executive.home import Home
from executive.logs import get_logger
from executive.loop.executive import Executive
from executive.memory import remote
from executive.memory import snapshot as snapshots
from executive.memory.maintenance import Maintenance
from executive.memory.runtime import MemoryRuntime
from executive.settings import Settings

log = get_logger(__name__)


class AlreadyRunning(RuntimeError):
    pass


@contextmanager
def daemon_lock(home: Home) -> Iterator[None]:
    """One daemon per home: an flock on a pid file, released by the kernel on any exit."""
    home.ensure_state()
    fd = os.open(home.daemon_pid, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise AlreadyRunning(
                f"another executive daemon (pid {holder}) is running on {home.root}"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def build(settings: Settings, notifier: Notifier | None = None) -> Supervisor:
    home = Home(settings.home)
    # Every secret value the operator gave us, by name, is redacted wherever text is recorded.
    redact.learn(home=home.root, secrets=settings.secret_values())
    runtime = MemoryRuntime(settings)
    maintenance = Maintenance(runtime)
    executive = Executive(settings, runtime)
    hour, minute = settings.snapshot_hour_minute
    jobs = [
        Job(
            "daily-snapshot",
            partial(_snapshot, maintenance),
            daily(hour, minute, settings.tz),
            # The job store forgets runs missed while the daemon was down: catch up.
            overdue=lambda: (
                maintenance.should_snapshot() is None and snapshots.overdue(home.snapshots)
            ),
        ),
        Job(
            "replay-pending-writes",
            partial(_replay, maintenance),
            IntervalTrigger(seconds=settings.replay_interval_seconds, timezone=settings.tz),
            overdue=lambda: settings.surface_memory_on and runtime.pending_writes() > 0,
        ),
    ]
    services: list[Callable[[], Awaitable[None]]] = [
        partial(remote.serve, build_surface(runtime), home.socket)
    ]
    return Supervisor(executive, settings, jobs=jobs, services=services, notifier=notifier)


async def _snapshot(maintenance: Maintenance) -> dict[str, object]:
    reason = maintenance.should_snapshot()
    if reason is not None:
        log.info("snapshot.skipped", reason=reason)
        return {"skipped": True, "reason": reason}
    return await maintenance.snapshot()


async def _replay(maintenance: Maintenance) -> dict[str, object]:
    if not maintenance.runtime.settings.surface_memory_on:
        return {"skipped": True, "reason": "V3_MEMORY_ENABLED off"}
    return await maintenance.replay()
