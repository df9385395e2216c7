from datetime import UTC, datetime, timedelta

import pytest

from executive.workspace.state import BundleState, StepState, backoff_seconds


@pytest.mark.parametrize(
    ("attempts", "wait"), [(0, 0), (1, 30), (2, 60), (3, 120), (6, 960), (7, 1800), (99, 1800)]
)
def test_the_wait_doubles_from_the_floor_up_to_the_ceiling(attempts, wait):
    assert backoff_seconds(attempts, 30, 1800) == wait


def test_a_zero_floor_means_no_wait():
    assert backoff_seconds(5, 0, 1800) == 0


def test_a_step_waits_until_its_retry_time():
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    later = (now + timedelta(seconds=60)).isoformat()
    state = BundleState(
        slug="b",
        title="b",
        priority="P1",
        steps=[StepState(number=1, title="s", retry_after=later)],
    )
    assert state.waiting_until(now) == now + timedelta(seconds=60)
    assert state.waiting_until(now + timedelta(seconds=61)) is None
