"""Scheduled jobs: APScheduler 3.x's ``AsyncIOScheduler`` inside the running event loop.

The in-memory job store forgets runs missed while the daemon was down, so each job may say
whether it is overdue; an overdue job runs once right after start-up (the catch-up).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger

from executive.logs import get_logger

log = get_logger(__name__)

# A busy loop or a blocking call near the hour must not make the day's job vanish
# (APScheduler's default grace is one second).
MISFIRE_GRACE_SECONDS = 3600


@dataclass(frozen=True)
class Job:
    id: str
    run: Callable[[], Awaitable[object]]
    trigger: BaseTrigger
    overdue: Callable[[], bool] | None = None


def daily(hour: int, minute: int, tz: ZoneInfo) -> CronTrigger:
    return CronTrigger(hour=hour, minute=minute, timezone=tz)


def start_scheduler(jobs: list[Job], tz: ZoneInfo) -> AsyncIOScheduler:
    """Start a scheduler for ``jobs`` on the running loop; catch up overdue ones now."""
    scheduler = AsyncIOScheduler(
        timezone=tz,
        job_defaults={
            "coalesce": True,
            "max_instances": 1,
            "misfire_grace_time": MISFIRE_GRACE_SECONDS,
        },
    )
    for job in jobs:
        _add(scheduler, job, job.id, job.trigger)
    scheduler.start()
    for job in jobs:
        if _overdue(job):
            log.info("job.catch_up", job=job.id)
            _add(scheduler, job, f"{job.id}.catch-up", DateTrigger(run_date=datetime.now(tz)))
    for job in scheduler.get_jobs():
        log.info("job.scheduled", job=job.id, next_run=str(job.next_run_time))
    return scheduler


def next_runs(scheduler: AsyncIOScheduler) -> dict[str, str]:
    return {job.id: job.next_run_time.isoformat() for job in scheduler.get_jobs()}


def _overdue(job: Job) -> bool:
    try:
        return bool(job.overdue and job.overdue())
    except Exception as exc:
        log.error("job.overdue_check_failed", job=job.id, error=repr(exc))
        return False


def _add(scheduler: AsyncIOScheduler, job: Job, label: str, trigger: BaseTrigger) -> None:
    async def run() -> None:
        started = time.monotonic()
        log.info("job.started", job=label)
        try:
            result = await job.run()
        except Exception as exc:
            # A failed job must not take the scheduler (or the daemon) with it.
            log.exception("job.failed", job=label, error=repr(exc))
            return
        log.info(
            "job.finished",
            job=label,
            duration_ms=round((time.monotonic() - started) * 1000),
            result=result if isinstance(result, dict | str | int | None) else repr(result),
        )

    scheduler.add_job(run, trigger, id=label, name=label, replace_existing=True)
