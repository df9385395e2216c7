"""The observer's progress: a long worker run is progress while the heartbeat beats; a loop
that neither ticks nor waits on a worker within its limit is not."""

from __future__ import annotations

import pytest

from executive.observe import Observer

MINUTE = 60.0
BEAT = 15.0  # the supervisor's heartbeat period (daemon/supervisor.py)


START = 1024.0  # a monotonic instant whose sums with whole seconds are exact


def started() -> tuple[Observer, float]:
    """An observer whose first iteration started at START: the clock is the test's, so no
    figure depends on when this machine booted (a large monotonic reading rounds)."""
    observer = Observer()
    observer.iteration_started(1, now=START)
    return observer, START


def beats(observer: Observer, start: float, until: float) -> None:
    for k in range(int((until - start) // BEAT) + 1):
        observer.alive(start + k * BEAT)


def test_a_45_minute_worker_run_is_progress_while_the_heartbeat_beats():
    observer, start = started()
    with observer.waiting_on_worker(3600, now=start):
        beats(observer, start, start + 45 * MINUTE)
        now = start + 45 * MINUTE + 5
        # No iteration started or ended for 45 minutes...
        assert now - observer.last_tick >= 45 * MINUTE
        # ...but the loop was waiting on a worker within its limit all along.
        assert observer.seconds_without_progress(now) <= BEAT


def test_without_a_heartbeat_the_wait_is_not_progress():
    """A blocked event loop beats no more: the gauge grows from the last beat."""
    observer, start = started()
    with observer.waiting_on_worker(3600, now=start):
        beats(observer, start, start + 10 * MINUTE)
        assert observer.seconds_without_progress(start + 30 * MINUTE) >= 19 * MINUTE


def test_a_worker_past_its_limit_is_no_longer_progress():
    observer, start = started()
    with observer.waiting_on_worker(600, now=start):
        beats(observer, start, start + 40 * MINUTE)
    # Beats counted up to the limit and the minute a kill may take (11 minutes), not after:
    # the last counted one is at most a beat before.
    stalled = observer.seconds_without_progress(start + 40 * MINUTE)
    assert 29 * MINUTE <= stalled <= 29 * MINUTE + BEAT


def test_beats_with_no_worker_running_are_not_progress():
    observer, start = started()  # its iteration runs a hook that never returns, say
    beats(observer, start, start + 20 * MINUTE)
    assert observer.seconds_without_progress(start + 20 * MINUTE) == 20 * MINUTE


def test_an_iteration_ending_is_progress():
    observer = Observer()
    observer.iteration_started(1)
    observer.iteration_finished(1, "idle", 3)
    assert observer.last_tick is not None
    assert observer.seconds_without_progress(observer.last_tick + 30) == pytest.approx(30)
