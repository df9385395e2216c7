from __future__ import annotations

from zoneinfo import ZoneInfo

import anyio
import pytest
from apscheduler.triggers.cron import CronTrigger

from executive.daemon.schedule import MISFIRE_GRACE_SECONDS, Job, start_scheduler

pytestmark = pytest.mark.anyio

TZ = ZoneInfo("Europe/Berlin")


# A guard against a hang, not a speed bound: a job set for every second fires within one.
HANG = 60


async def test_a_cron_job_fires_on_the_loop():
    fired = anyio.Event()

    async def job() -> None:
        fired.set()

    # Every second: the next slot is never already past, however late the scheduler starts.
    scheduler = start_scheduler([Job("near", job, CronTrigger(second="*", timezone=TZ))], TZ)
    try:
        with anyio.fail_after(HANG):
            await fired.wait()
    finally:
        scheduler.shutdown(wait=False)


async def test_an_overdue_job_is_caught_up_at_start():
    ran = anyio.Event()

    async def job() -> None:
        ran.set()

    far = CronTrigger(hour=4, minute=0, timezone=TZ)
    scheduler = start_scheduler([Job("snap", job, far, overdue=lambda: True)], TZ)
    try:
        with anyio.fail_after(HANG):
            await ran.wait()
        assert scheduler.get_job("snap") is not None  # the daily slot stays
    finally:
        scheduler.shutdown(wait=False)


async def test_job_defaults_coalesce_single_instance_and_an_hour_of_grace():
    async def job() -> None:
        return None

    scheduler = start_scheduler([Job("d", job, CronTrigger(hour=4, timezone=TZ))], TZ)
    try:
        configured = scheduler.get_job("d")
        assert configured.coalesce is True
        assert configured.max_instances == 1
        assert configured.misfire_grace_time == MISFIRE_GRACE_SECONDS == 3600
        assert str(configured.trigger.timezone) == "Europe/Berlin"
    finally:
        scheduler.shutdown(wait=False)


async def test_a_failing_job_does_not_stop_the_scheduler():
    failures = 0
    later = anyio.Event()

    async def bad() -> None:
        nonlocal failures
        failures += 1
        raise RuntimeError("snapshot target unwritable")

    async def good() -> None:
        if failures:  # the bad job has raised, and jobs still run
            later.set()

    every_second = CronTrigger(second="*", timezone=TZ)
    scheduler = start_scheduler(
        [Job("bad", bad, every_second), Job("good", good, every_second)], TZ
    )
    try:
        with anyio.fail_after(HANG):
            await later.wait()
    finally:
        scheduler.shutdown(wait=False)
