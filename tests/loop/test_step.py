"""One attempt's parts on a real home with a real command worker."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from executive.home import Home
from executive.loop import step as steps
from executive.loop.attempt import Attempt
from executive.settings import load_settings
from executive.workers.record import left
from executive.workspace.lifecycle import Workspace
from tests.loop.homes import add_bundle, make_home


@pytest.fixture
def prepared(tmp_path: Path):
    home = make_home(tmp_path, EXECUTIVE_WORKER_ISOLATION="none")
    add_bundle(home, "files", "mkdir -p src && echo x > src/a.py && echo ok > out.txt\n")
    settings = load_settings(home)
    workspace = Workspace(Home(home), "command", 100)
    [active] = workspace.ingest()
    step = active.state.steps[0]

    async def run() -> steps.Prepared | Attempt:
        return await steps.prepare(
            settings=settings,
            home=Home(home),
            bundle=active.bundle,
            step=step,
            vendor="command",
            contract_id="contract-1",
            pack=None,
        )

    return settings, Home(home), active.bundle, anyio.run(run)


def test_what_a_worker_left_is_read_off_the_event_loop(prepared, monkeypatch):
    # A walk of a worker's folder (150,000 files took 1.2 s) held the dashboard, the control
    # socket and the watchdog when it ran on the loop: it runs in a worker thread.
    settings, home, bundle, worker = prepared
    threads: dict[str, set[int]] = {"snapshot": set(), "read_run": set()}
    for name in threads:
        real = getattr(left, name)  # the names the record room's Left calls

        def seen(*args, _name=name, _real=real, **kwargs):
            threads[_name].add(threading.get_ident())
            return _real(*args, **kwargs)

        monkeypatch.setattr(left, name, seen)

    async def run() -> tuple[Attempt, int]:
        return await steps.spawn(settings, home, bundle, worker), threading.get_ident()

    attempt, loop_thread = anyio.run(run)
    assert attempt.exited_clean and attempt.output_changed
    assert attempt.experience is not None
    assert sorted(attempt.experience.changed) == ["out.txt", "src/a.py"]
    assert threads["snapshot"] and threads["read_run"]
    assert loop_thread not in threads["snapshot"] | threads["read_run"]
