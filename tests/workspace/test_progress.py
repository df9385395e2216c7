"""The step under way, a wait counted from now, a pending cancel: what the files say now."""

from __future__ import annotations

from datetime import UTC, datetime

from executive.home import Home
from executive.workspace import operator
from executive.workspace.progress import duration, running, wait_seconds
from executive.workspace.state import BundleState, StepState, write_state

NOW = datetime(2026, 12, 7, 12, 0, 0, tzinfo=UTC)


def _bundle(home: Home, slug: str, where: str, steps: list[StepState]) -> None:
    folder = (home.priority_dir(where) if where.startswith("P") else home.completed) / slug
    folder.mkdir(parents=True)
    write_state(folder, BundleState(slug=slug, title=slug, priority="P1", steps=steps))


def test_the_step_under_way_with_its_attempt_and_how_long_it_has_run(tmp_path):
    home = Home(tmp_path)
    started = StepState(
        number=2, title="build", status="in_progress", attempts=1, started_at="2026-12-07T11:15:30Z"
    )
    _bundle(home, "site", "P1", [StepState(number=1, title="plan", status="done"), started])
    _bundle(home, "idle", "P2", [StepState(number=1, title="wait")])
    _bundle(home, "old", "completed", [StepState(number=1, title="x", status="in_progress")])
    operator.request_cancel(home, "site")
    [run] = running(home, NOW)
    assert run.as_dict() == {
        "slug": "site",
        "priority": "P1",
        "step": 2,
        "steps": 2,
        "title": "build",
        "attempt": 2,
        "started_at": "2026-12-07T11:15:30Z",
        "seconds": 44 * 60 + 30,
        "cancel_pending": True,
    }
    assert not operator.cancel_pending(home, "idle")


def test_a_wait_is_counted_from_now_and_one_gone_by_is_none():
    assert wait_seconds("2026-12-07T12:04:10Z", NOW) == 250
    assert wait_seconds("2026-12-07T11:00:00Z", NOW) == 0
    assert wait_seconds("", NOW) == 0
    assert [duration(s) for s in (9, 250, 7620)] == ["9s", "4m10s", "2h07m"]
