"""The running daemon's ``status`` answer, as its control socket serves it."""

from __future__ import annotations

import threading

import pytest

from executive.daemon import live
from executive.memory.runtime import MemoryRuntime
from executive.settings import load_settings

pytestmark = pytest.mark.anyio


async def test_the_files_view_is_gathered_off_the_event_loop(home, monkeypatch):
    # It folds the whole harvest ledger for its pending writes (18,000 memories: ~0.85 s),
    # which held the dashboard, the control socket and the watchdog when it ran on the loop.
    threads: set[int] = set()
    real = live.gather

    def seen(settings):
        threads.add(threading.get_ident())
        return real(settings)

    monkeypatch.setattr(live, "gather", seen)
    report = await live.LiveStatus(MemoryRuntime(load_settings(home)))()
    assert report["source"] == "daemon" and report["pending_writes"] == 0
    assert threads and threading.get_ident() not in threads
