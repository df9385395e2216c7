from datetime import UTC, datetime, timedelta

from executive.workspace.state import BundleState, StepState


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
