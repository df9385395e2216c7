"""Grace-period logic of the supervisor, driven by real signals sent to this process."""

from __future__ import annotations

import os
import signal

import anyio
import pytest

from executive.daemon.notify import Notifier
from executive.daemon.supervisor import Supervisor
from executive.loop.pace import Pace
from executive.settings import load_settings

pytestmark = pytest.mark.anyio


class SlowExecutive:
    """Each iteration takes ``seconds``; records how far each one got."""

    def __init__(self, seconds: float, fail_first: bool = False) -> None:
        self.seconds = seconds
        self.fail_first = fail_first
        self.started = 0
        self.finished = 0
        self.closed = False

    async def start(self) -> None:
        return None

    async def iterate(self, number: int) -> Pace:
        self.started += 1
        if self.fail_first and number == 1:
            raise RuntimeError("iteration exploded")
        await anyio.sleep(self.seconds)
        self.finished += 1
        return Pace.BUSY

    async def close(self) -> None:
        self.closed = True


def supervisor(tmp_path, executive, **env) -> Supervisor:
    settings = load_settings(tmp_path, **env)
    return Supervisor(executive, settings, notifier=Notifier({}))


async def send_after(delay: float, signum: signal.Signals) -> None:
    await anyio.sleep(delay)
    os.kill(os.getpid(), signum)


async def test_sigterm_lets_the_running_iteration_finish_within_the_grace(tmp_path):
    executive = SlowExecutive(0.6)
    sup = supervisor(tmp_path, executive, shutdown_grace_seconds=5)
    async with anyio.create_task_group() as tg:
        tg.start_soon(send_after, 0.2, signal.SIGTERM)
        assert await sup.run() == 0
    assert (executive.started, executive.finished) == (1, 1)
    assert executive.closed


async def test_the_iteration_is_cancelled_when_the_grace_expires(tmp_path):
    executive = SlowExecutive(30)
    sup = supervisor(tmp_path, executive, shutdown_grace_seconds=0.3)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(send_after, 0.2, signal.SIGTERM)
            assert await sup.run() == 0
    assert (executive.started, executive.finished) == (1, 0)
    assert executive.closed


async def test_a_second_signal_stops_at_once(tmp_path):
    executive = SlowExecutive(30)
    sup = supervisor(tmp_path, executive, shutdown_grace_seconds=60)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(send_after, 0.2, signal.SIGINT)
            tg.start_soon(send_after, 0.4, signal.SIGINT)
            assert await sup.run() == 0
    assert executive.finished == 0


async def test_sigusr2_waits_for_the_iteration_however_long(tmp_path):
    executive = SlowExecutive(1.0)
    sup = supervisor(tmp_path, executive, shutdown_grace_seconds=0.1)
    async with anyio.create_task_group() as tg:
        tg.start_soon(send_after, 0.2, signal.SIGUSR2)
        assert await sup.run() == 0
    assert (executive.started, executive.finished) == (1, 1)


async def test_a_failing_iteration_is_logged_and_the_loop_goes_on(tmp_path):
    executive = SlowExecutive(0.01, fail_first=True)
    sup = supervisor(tmp_path, executive, idle_sleep_seconds=0.2)
    async with anyio.create_task_group() as tg:
        tg.start_soon(send_after, 0.5, signal.SIGTERM)
        assert await sup.run() == 0
    assert executive.started >= 2
    assert executive.finished >= 1
