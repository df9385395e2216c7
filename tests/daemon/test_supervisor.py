"""Grace-period logic of the supervisor, driven by real signals sent to this process."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import pytest
from anyio.abc import TaskStatus

from executive.daemon.notify import Notifier
from executive.daemon.supervisor import Supervisor
from executive.loop.executive import Pace
from executive.settings import load_settings

pytestmark = pytest.mark.anyio


class GatedExecutive:
    """An iteration runs until the test releases it (or forever); says when one is running.

    Signals are sent from inside an iteration, so the supervisor's handlers are installed
    (they are, before the first iteration starts), and never after a guessed delay.
    """

    def __init__(self, fail_first: bool = False) -> None:
        self.fail_first = fail_first
        self.running = anyio.Event()
        self.release = anyio.Event()
        self.started = 0
        self.finished = 0
        self.closed = False

    async def start(self) -> None:
        return None

    async def iterate(self, number: int) -> Pace:
        self.started += 1
        if self.fail_first and number == 1:
            raise RuntimeError("iteration exploded")
        self.running.set()
        await self.release.wait()
        self.finished += 1
        return Pace.BUSY

    async def close(self) -> None:
        self.closed = True


class StopHeard(Notifier):
    """Knows when the supervisor has taken a stop request in (it tells systemd first)."""

    def __init__(self) -> None:
        super().__init__({})
        self.heard = anyio.Event()

    def stopping(self) -> bool:
        self.heard.set()
        return super().stopping()


def supervisor(tmp_path, executive, **env) -> tuple[Supervisor, StopHeard]:
    settings = load_settings(tmp_path, **env)
    notifier = StopHeard()
    return Supervisor(executive, settings, notifier=notifier), notifier


def signal_self(signum: signal.Signals) -> None:
    os.kill(os.getpid(), signum)


# A guard against a hang, not a speed bound: each of these stops in well under a second.
HANG = 120


async def test_sigterm_lets_the_running_iteration_finish_within_the_grace(tmp_path):
    executive = GatedExecutive()
    sup, heard = supervisor(tmp_path, executive, shutdown_grace_seconds=60)

    async def drive() -> None:
        await executive.running.wait()
        signal_self(signal.SIGTERM)
        await heard.heard.wait()
        executive.release.set()  # the iteration ends inside the grace

    with anyio.fail_after(HANG):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            assert await sup.run() == 0
    assert (executive.started, executive.finished) == (1, 1)
    assert executive.closed


async def test_the_iteration_is_cancelled_when_the_grace_expires(tmp_path):
    executive = GatedExecutive()  # never released
    sup, _ = supervisor(tmp_path, executive, shutdown_grace_seconds=0.3)

    async def drive() -> None:
        await executive.running.wait()
        signal_self(signal.SIGTERM)

    with anyio.fail_after(HANG):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            assert await sup.run() == 0
    assert (executive.started, executive.finished) == (1, 0)
    assert executive.closed


async def test_a_second_signal_stops_at_once(tmp_path):
    executive = GatedExecutive()  # never released, and the grace is an hour
    sup, heard = supervisor(tmp_path, executive, shutdown_grace_seconds=3600)

    async def drive() -> None:
        await executive.running.wait()
        signal_self(signal.SIGINT)
        await heard.heard.wait()
        signal_self(signal.SIGINT)

    with anyio.fail_after(HANG):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            assert await sup.run() == 0
    assert executive.finished == 0


async def test_sigusr2_waits_for_the_iteration_however_long(tmp_path):
    executive = GatedExecutive()
    # A grace of zero: had SIGUSR2 started the grace timer, it would fire at the next turn of
    # the event loop, well within the hundred turns the iteration is kept running below.
    sup, heard = supervisor(tmp_path, executive, shutdown_grace_seconds=0)

    async def drive() -> None:
        await executive.running.wait()
        signal_self(signal.SIGUSR2)
        await heard.heard.wait()
        for _ in range(100):
            await anyio.lowlevel.checkpoint()
        executive.release.set()

    with anyio.fail_after(HANG):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            assert await sup.run() == 0
    assert (executive.started, executive.finished) == (1, 1)


async def test_a_failing_iteration_is_logged_and_the_loop_goes_on(tmp_path):
    executive = GatedExecutive(fail_first=True)
    sup, heard = supervisor(tmp_path, executive, idle_sleep_seconds=0.2)

    async def drive() -> None:
        await executive.running.wait()  # the second iteration: the loop went on
        signal_self(signal.SIGTERM)
        await heard.heard.wait()
        executive.release.set()

    with anyio.fail_after(HANG):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            assert await sup.run() == 0
    assert (executive.started, executive.finished) == (2, 1)


class RecordingNotifier(Notifier):
    """A notifier with systemd's watchdog configured (one hour) that keeps what it sends."""

    def __init__(self) -> None:
        super().__init__({"NOTIFY_SOCKET": "/nonexistent", "WATCHDOG_USEC": str(3600 * 10**6)})
        self.sent: list[str] = []

    def send(self, *states: str) -> bool:
        self.sent.extend(states)
        return True


class CountedExecutive:
    """Returns ``paces`` one per iteration, then asks this process to stop (SIGTERM)."""

    def __init__(self, *paces: Pace) -> None:
        self.paces = list(paces)

    async def start(self) -> None:
        return None

    async def iterate(self, number: int) -> Pace:
        if number == len(self.paces):
            os.kill(os.getpid(), signal.SIGTERM)
        return self.paces[number - 1]

    async def close(self) -> None:
        return None


async def test_watchdog_pings_come_only_from_the_heartbeat_and_stopping_is_sent_once(tmp_path):
    notifier = RecordingNotifier()
    executive = CountedExecutive(Pace.BUSY, Pace.BUSY, Pace.BUSY, Pace.BUSY)
    settings = load_settings(tmp_path)
    sup = Supervisor(executive, settings, notifier=notifier)
    assert await sup.run() == 0
    # Four iterations inside one heartbeat interval: no ping from the loop itself.
    assert notifier.sent.count("WATCHDOG=1") == 0
    assert notifier.sent.count("STOPPING=1") == 1
    assert notifier.sent[0] == "READY=1"


async def test_ready_waits_for_the_warmup_and_names_hooks_store_and_version(tmp_path):
    from structlog.testing import capture_logs

    from executive import __version__

    order: list[str] = []
    notifier = RecordingNotifier()

    async def warmup() -> dict[str, object]:
        order.append(f"warmup, READY sent: {'READY=1' in notifier.sent}")
        return {"backend": "local", "opened": True}

    sup = Supervisor(
        CountedExecutive(Pace.BUSY), load_settings(tmp_path), notifier=notifier, warmup=warmup
    )
    with capture_logs() as logs:
        assert await sup.run() == 0
    assert order == ["warmup, READY sent: False"]
    [ready] = [r for r in logs if r["event"] == "daemon.ready"]
    assert ready["version"] == __version__
    assert ready["store"] == {"backend": "local", "opened": True}
    assert ready["hooks"]["pre-spawn-pack"] == "V3_MEMORY_ENABLED off"


async def test_ready_waits_for_every_service_to_start_serving(tmp_path):
    """READY tells clients to connect: a service that is only scheduled by then (the control
    socket was) refuses the first one."""
    notifier = RecordingNotifier()
    order: list[str] = []

    def slow_to_listen(name: str) -> Callable[..., Awaitable[None]]:
        async def serve(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            for _ in range(20):  # other tasks get turns before this one serves
                await anyio.lowlevel.checkpoint()
            order.append(f"{name} serving, READY sent: {'READY=1' in notifier.sent}")
            task_status.started()
            await anyio.sleep_forever()

        return serve

    sup = Supervisor(
        CountedExecutive(Pace.BUSY),
        load_settings(tmp_path),
        notifier=notifier,
        services=[slow_to_listen("socket"), slow_to_listen("dashboard")],
    )
    assert await sup.run() == 0
    assert order == ["socket serving, READY sent: False", "dashboard serving, READY sent: False"]
    assert notifier.sent[0] == "READY=1"


async def test_an_idle_daemon_says_so_on_its_first_idle_tick(tmp_path):
    from structlog.testing import capture_logs

    paces = [Pace.BUSY, Pace.IDLE, Pace.IDLE, Pace.BUSY, Pace.IDLE]
    sup = Supervisor(
        CountedExecutive(*paces),
        load_settings(tmp_path, idle_sleep_seconds=0.001),
        notifier=Notifier({}),
    )
    with capture_logs() as logs:
        assert await sup.run() == 0
    idle = [r for r in logs if r["event"] == "loop.idle"]
    # The first tick of each idle stretch reports; the rest of the stretch is quiet.
    assert [r["idle_ticks"] for r in idle] == [0, 0]
    assert idle[0]["queue"]["ondeck"] == 0


class AfterCatchUp:
    """Idles once the overdue job's catch-up has run, then asks this process to stop."""

    def __init__(self) -> None:
        self.caught_up = anyio.Event()

    async def start(self) -> None:
        return None

    async def catch_up(self) -> None:
        self.caught_up.set()

    async def iterate(self, number: int) -> Pace:
        await self.caught_up.wait()
        if number == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return Pace.IDLE

    async def close(self) -> None:
        return None


async def test_idle_reports_name_the_jobs_as_the_scheduler_has_them_now(tmp_path):
    from apscheduler.triggers.cron import CronTrigger
    from structlog.testing import capture_logs

    from executive.daemon.schedule import Job

    executive = AfterCatchUp()
    settings = load_settings(tmp_path, idle_sleep_seconds=0.001)
    daily = Job("snap", executive.catch_up, CronTrigger(hour=4, timezone=settings.tz), lambda: True)
    sup = Supervisor(executive, settings, notifier=Notifier({}), jobs=[daily])
    with capture_logs() as logs:
        assert await sup.run() == 0
    [idle] = [r for r in logs if r["event"] == "loop.idle"]
    # The catch-up ran before the first iteration went on: only the daily slot is left.
    assert list(idle["next_jobs"]) == ["snap"]
    # The status file, written after the last iteration, says the same.
    assert list(json.loads(sup._home.status_file.read_text())["jobs"]) == ["snap"]


@pytest.mark.parametrize(("sleep", "every"), [(30, 10), (10, 30), (600, 1), (0, 300)])
def test_idle_reports_come_every_five_minutes_of_ticks(sleep, every):
    from executive.daemon.supervisor import idle_report_every

    assert idle_report_every(sleep) == every


class Scripted:
    """Raises or returns one scripted outcome per iteration, noting the supervisor's health as
    each iteration starts (so after the one before); stops the process after the last."""

    def __init__(self, *outcomes: Pace | Exception) -> None:
        self.outcomes = list(outcomes)
        self.supervisor: Supervisor | None = None
        self.seen: list[dict[str, object]] = []

    async def start(self) -> None:
        return None

    async def iterate(self, number: int) -> Pace:
        assert self.supervisor is not None
        self.seen.append(self.supervisor.health())
        if number == len(self.outcomes):
            os.kill(os.getpid(), signal.SIGTERM)
        outcome = self.outcomes[number - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    async def close(self) -> None:
        return None


TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"


async def test_failures_in_a_row_make_the_daemon_unhealthy_until_one_succeeds(tmp_path):
    boom = RuntimeError(f"the queue cannot be read (token {TOKEN})")
    executive = Scripted(boom, boom, boom, boom, Pace.BUSY, Pace.IDLE)
    sup, _ = supervisor(tmp_path, executive, idle_sleep_seconds=0.01, unhealthy_after_failures=3)
    executive.supervisor = sup
    with anyio.fail_after(HANG):
        assert await sup.run() == 0
    oks = [h["ok"] for h in executive.seen]
    assert oks == [True, True, True, False, False, True]
    assert [h["failed_in_a_row"] for h in executive.seen] == [0, 1, 2, 3, 4, 0]
    unhealthy = str(executive.seen[3]["detail"])
    assert unhealthy.startswith("failing: the last 3 iterations failed (unhealthy from 3 in a row)")
    assert "iteration 3" in unhealthy and "RuntimeError: the queue cannot be read" in unhealthy
    assert TOKEN not in unhealthy and "[REDACTED]" in unhealthy  # an error may quote a secret
    assert "1 failed in a row" in str(executive.seen[1]["detail"])
    # The status file (the files' view of `executive status`) says the same.
    status = json.loads((tmp_path / ".state" / "status.json").read_text())
    assert status["health"] == {"ok": True, "detail": "ok", "failed_in_a_row": 0, "degraded": {}}
    failed = [i for i in status["recent_iterations"] if i["pace"] == "failed"]
    assert len(failed) == 4 and all(i["error"].startswith("RuntimeError: ") for i in failed)
    assert TOKEN not in json.dumps(status)


@pytest.mark.parametrize(("outcome", "code"), [(RuntimeError("no"), 1), (Pace.IDLE, 0)])
async def test_run_once_exits_1_when_its_iteration_failed(tmp_path, outcome, code):
    class Once(Scripted):
        async def iterate(self, number: int) -> Pace:
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

    sup, _ = supervisor(tmp_path, Once())
    with anyio.fail_after(HANG):
        assert await sup.run_once() == code


async def test_the_heartbeat_counts_a_workers_wait_as_progress_without_systemd(
    tmp_path, monkeypatch
):
    """No watchdog configured (PM2, a shell): the heartbeat still tells the observer the
    event loop is alive, and a beat during a worker's run is progress (/metrics'
    executive_seconds_without_progress, the ExecutiveLoopStalled alert)."""
    from executive.daemon import supervisor as supervisor_module
    from executive.observe import Observer

    monkeypatch.setattr(supervisor_module, "_ALIVE_SECONDS", 0.01)

    class Beats(Observer):
        def __init__(self) -> None:
            super().__init__()
            self.progressed = anyio.Event()

        def alive(self, now: float | None = None) -> None:
            super().alive(now)
            if self.last_progress is not None:
                self.progressed.set()

    observer = Beats()

    class AWorkerRuns:
        async def start(self) -> None:
            return None

        async def iterate(self, number: int) -> Pace:
            with observer.waiting_on_worker(3600), anyio.fail_after(30):
                await observer.progressed.wait()
            os.kill(os.getpid(), signal.SIGTERM)
            return Pace.BUSY

        async def close(self) -> None:
            return None

    sup = Supervisor(
        AWorkerRuns(), load_settings(tmp_path), notifier=Notifier({}), observer=observer
    )
    assert await sup.run() == 0
    assert observer.last_progress is not None
