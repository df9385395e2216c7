"""The observer's progress: a long worker run is progress while the heartbeat beats; a loop
that neither ticks nor waits on a worker within its limit is not."""

from __future__ import annotations

import pytest

from executive.observe import Observer

MINUTE = 60.0
BEAT = 15.0  # the supervisor's heartbeat period (daemon/supervisor.py)


def beats(observer: Observer, start: float, until: float) -> None:
    # Rounded: with a large monotonic start, (start + 2700) - start can come out just under
    # 2700, and floor division would drop the last beat.
    for k in range(round((until - start) / BEAT) + 1):
        observer.alive(start + k * BEAT)


def test_a_45_minute_worker_run_is_progress_while_the_heartbeat_beats():
    observer = Observer()
    observer.iteration_started(1)
    start = observer.last_tick
    assert start is not None
    with observer.waiting_on_worker(3600, now=start):
        beats(observer, start, start + 45 * MINUTE)
        now = start + 45 * MINUTE + 5
        # No iteration started or ended for 45 minutes...
        assert now - observer.last_tick >= 45 * MINUTE
        # ...but the loop was waiting on a worker within its limit all along.
        assert observer.seconds_without_progress(now) <= BEAT


def test_without_a_heartbeat_the_wait_is_not_progress():
    """A blocked event loop beats no more: the gauge grows from the last beat."""
    observer = Observer()
    observer.iteration_started(1)
    start = observer.last_tick
    assert start is not None
    with observer.waiting_on_worker(3600, now=start):
        beats(observer, start, start + 10 * MINUTE)
        assert observer.seconds_without_progress(start + 30 * MINUTE) >= 19 * MINUTE


def test_a_worker_past_its_limit_is_no_longer_progress():
    observer = Observer()
    observer.iteration_started(1)
    start = observer.last_tick
    assert start is not None
    with observer.waiting_on_worker(600, now=start):
        beats(observer, start, start + 40 * MINUTE)
    # Beats counted up to the limit and the minute a kill may take (11 minutes), not after:
    # the last counted one is at most a beat before. Monotonic times are large floats.
    stalled = observer.seconds_without_progress(start + 40 * MINUTE)
    assert 29 * MINUTE - 1e-6 <= stalled <= 29 * MINUTE + BEAT + 1e-6


def test_beats_with_no_worker_running_are_not_progress():
    observer = Observer()
    observer.iteration_started(1)  # a hook that never returns, say
    start = observer.last_tick
    assert start is not None
    beats(observer, start, start + 20 * MINUTE)
    assert observer.seconds_without_progress(start + 20 * MINUTE) == pytest.approx(20 * MINUTE)


def test_an_iteration_ending_is_progress():
    observer = Observer()
    observer.iteration_started(1)
    observer.iteration_finished(1, "idle", 3)
    assert observer.last_tick is not None
    assert observer.seconds_without_progress(observer.last_tick + 30) == pytest.approx(30)
