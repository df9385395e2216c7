from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import anyio
import pytest
from apscheduler.triggers.cron import CronTrigger

from executive.daemon.schedule import MISFIRE_GRACE_SECONDS, Job, start_scheduler

pytestmark = pytest.mark.anyio

TZ = ZoneInfo("Europe/Berlin")


async def test_a_near_future_cron_job_fires():
    fired = anyio.Event()

    async def job() -> None:
        fired.set()

    at = datetime.now(TZ) + timedelta(seconds=2)
    trigger = CronTrigger(hour=at.hour, minute=at.minute, second=at.second, timezone=TZ)
    scheduler = start_scheduler([Job("near", job, trigger)], TZ)
    try:
        with anyio.fail_after(6):
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
        with anyio.fail_after(5):
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
    later = anyio.Event()

    async def bad() -> None:
        raise RuntimeError("snapshot target unwritable")

    async def good() -> None:
        later.set()

    now = datetime.now(TZ)
    soon = now + timedelta(seconds=1)
    after = now + timedelta(seconds=2)
    scheduler = start_scheduler(
        [
            Job(
                "bad",
                bad,
                CronTrigger(hour=soon.hour, minute=soon.minute, second=soon.second, timezone=TZ),
            ),
            Job(
                "good",
                good,
                CronTrigger(hour=after.hour, minute=after.minute, second=after.second, timezone=TZ),
            ),
        ],
        TZ,
    )
    try:
        with anyio.fail_after(6):
            await later.wait()
    finally:
        scheduler.shutdown(wait=False)
