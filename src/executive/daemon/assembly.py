"""The composition root: settings in, a running supervisor out."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from datetime import datetime
from functools import partial

import anyio
from apscheduler.triggers.interval import IntervalTrigger

from executive import redact
from executive.daemon import heap, retention, status
from executive.daemon.history import History
from executive.daemon.live import LiveStatus
from executive.daemon.notify import Notifier
from executive.daemon.schedule import Job, daily
from executive.daemon.supervisor import Service, Supervisor
from executive.envfile import unknown_environment_keys, unknown_keys
from executive.home import Home
from executive.logs import get_logger
from executive.loop.executive import Executive
from executive.memory import health as store_health
from executive.memory.durability import SnapshotRefused, snapshot_overdue
from executive.memory.runtime import MemoryRuntime
from executive.memory.store import StoreError, StoreUnavailable
from executive.observe import Observer
from executive.settings import Settings
from executive.surface import control
from executive.surface.build import build_surface
from executive.surface.maintenance import Maintenance
from executive.surface.operations import SurfaceError

log = get_logger(__name__)


def build(settings: Settings, notifier: Notifier | None = None) -> Supervisor:
    home = Home(settings.home)
    _learn_secrets(home, settings)
    runtime = MemoryRuntime(settings)
    observer = Observer()
    executive = Executive(settings, runtime, observer=observer)
    surface = build_surface(runtime)
    live = LiveStatus(runtime)
    surface.register("status", live)
    services: list[Service] = [partial(control.serve, surface, home.socket)]
    if settings.dashboard:
        # Starlette, Hypercorn and the templates (~0.4 s) load only for a dashboard that is on.
        from executive.dashboard import pages, routes, server

        app = routes.build_app(
            pages.Context(settings, observer, runtime, status=partial(status.gather, settings))
        )
        services.append(server.service(settings, app, observer))
    after: list[Callable[[], Awaitable[object]]] = [heap.after_iteration]
    warmups: list[Callable[[], Awaitable[object]]] = []
    if settings.snapshot_commit:
        history = History(home)
        after.append(history.after_iteration)
        warmups.append(history.start)
    supervisor = Supervisor(
        executive,
        settings,
        jobs=_jobs(home, settings, runtime),
        services=services,
        notifier=notifier,
        warmup=partial(_warm_up, runtime, warmups),
        after_iteration=after,
        observer=observer,
        settle=heap.settle,  # a daemon process's own heap
    )
    live.supervisor = supervisor
    return supervisor


def _learn_secrets(home: Home, settings: Settings) -> None:
    """Every secret value the operator gave us, by name, is redacted wherever text is
    recorded; so are the peer homes' (a worker may come across one of their tokens)."""
    for key, close in unknown_keys(home.env_file):
        log.warning("config.unknown_key", key=key, did_you_mean=close, file=str(home.env_file))
    for key, close in unknown_environment_keys():
        log.warning("config.unknown_key", key=key, did_you_mean=close, source="environment")
    for peer in settings.peer_home_list:
        env_file = Home(peer).env_file
        if env_file.exists() and not os.access(env_file, os.R_OK):
            log.warning("redact.peer_secrets_unreadable", file=str(env_file))
    redact.learn(homes=[home.root, *settings.peer_home_list], secrets=settings.secret_values())


def _jobs(home: Home, settings: Settings, runtime: MemoryRuntime) -> list[Job]:
    maintenance = Maintenance(runtime)
    hour, minute = settings.snapshot_hour_minute
    limits = retention.Limits(
        worker_logs_days=settings.retain_worker_logs_days,
        snapshots_days=settings.retain_snapshots_days,
        outputs_days=settings.retain_outputs_days,
    )
    return [
        Job(
            "daily-snapshot",
            partial(_snapshot, maintenance),
            daily(hour, minute, settings.tz),
            # The job store forgets runs missed while the daemon was down: catch up.
            overdue=lambda: (
                maintenance.should_snapshot() is None and snapshot_overdue(home.snapshots)
            ),
        ),
        Job(
            "replay-pending-writes",
            partial(_replay, maintenance),
            IntervalTrigger(seconds=settings.replay_interval_seconds, timezone=settings.tz),
            overdue=lambda: settings.surface_memory_on and runtime.pending_writes() > 0,
        ),
        Job(
            "daily-prune", partial(_prune, home, settings, limits), daily(hour, minute, settings.tz)
        ),
    ]


async def _warm_up(
    runtime: MemoryRuntime, others: list[Callable[[], Awaitable[object]]]
) -> dict[str, object]:
    for step in others:
        await step()
    return await _open_store(runtime)


async def _prune(home: Home, settings: Settings, limits: retention.Limits) -> dict[str, int]:
    now = datetime.now(settings.tz)
    return await anyio.to_thread.run_sync(retention.prune, home, settings.outputs, limits, now)


async def _open_store(runtime: MemoryRuntime) -> dict[str, object]:
    """Open the store before READY when the hooks are on; say which store it is."""
    settings = runtime.settings
    info: dict[str, object] = {"backend": settings.store_backend, "opened": False}
    if not settings.hooks_master_on:
        return info
    try:
        await runtime.store()
        indexed = await runtime.warm()
    except StoreError as exc:
        # Not fatal: every hook reports the failure as a value and the loop goes on.
        log.error(
            "store.unavailable",
            backend=settings.store_backend,
            error=str(exc),
            fix=store_health.down_fix(settings)
            if isinstance(exc, StoreUnavailable)
            else "executive --home HOME doctor",
        )
        return {**info, "error": str(exc)}
    found = await store_health.check(settings, await runtime.view(), runtime.ledger)
    if found.state == "short":
        # A lost folder or a wiped store: named at start, with its fix, before any pack is
        # built from it (and before a snapshot could record it: memory/durability/snapshot.py).
        log.error(
            "store.short",
            total=found.total,
            expected=found.expected,
            detail=found.detail,
            fix=found.fix,
        )
    elif not found.ok:
        log.error(
            "store.unavailable", backend=settings.store_backend, error=found.detail, fix=found.fix
        )
    return {**info, "opened": True, "word_index": indexed, "health": found.state}


async def _snapshot(maintenance: Maintenance) -> dict[str, object]:
    if (reason := maintenance.should_snapshot()) is not None:
        log.info("snapshot.skipped", reason=reason)
        return {"skipped": True, "reason": reason}
    try:
        return await maintenance.snapshot()
    except SurfaceError as exc:
        if not isinstance(exc.__cause__, SnapshotRefused):
            raise
        # Refused, not failed: the good copy stays; job.finished says why (so does the
        # snapshot.refused line before it).
        return {"ok": False, "refused": str(exc)}


async def _replay(maintenance: Maintenance) -> dict[str, object]:
    if (reason := maintenance.runtime.settings.surface_off) is not None:
        return {"skipped": True, "reason": reason}
    return await maintenance.replay()
