"""What ``executive status`` says about the daemon's health, from its report or its files."""

from __future__ import annotations

import fcntl
import json
import os

from executive.daemon import status
from executive.home import Home
from executive.settings import load_settings


def report(health: dict | None) -> dict:
    return {
        "home": "/h",
        "source": "files",
        "daemon": {"running": health is not None, "pid": 7 if health else None},
        "health": health,
        "memory": {"enabled": False, "store": "local", "engine": "builtin", "env": "dev"},
        "hooks": {},
        "queue": {"ondeck": 0, "in_progress": {}, "completed": 0, "blocked": 0},
        "pending_writes": 0,
        "last_snapshot": None,
        "next_snapshot": "",
        "recent_iterations": [
            {"iteration": 4, "pace": "failed", "duration_ms": 3, "finished_at": "t", "error": "E"}
        ],
    }


def test_an_unhealthy_daemon_is_shown_with_its_error_and_fails_the_command():
    sick = {"ok": False, "detail": "failing: the last 3 iterations failed; E", "failed_in_a_row": 3}
    lines = status.render(report(sick))
    assert "health   UNHEALTHY: failing: the last 3 iterations failed; E" in lines
    assert "  iteration 4: failed in 3 ms at t: E" in lines
    assert status.unhealthy(report(sick))
    assert not status.unhealthy(report({"ok": True, "detail": "ok", "failed_in_a_row": 0}))
    assert not status.unhealthy(report(None))  # no daemon: nothing runs to be unhealthy
    assert not any(line.startswith("health") for line in status.render(report(None)))


def test_the_files_view_takes_health_only_from_a_running_daemon(tmp_path):
    home = Home(tmp_path)
    home.state.mkdir(parents=True)
    sick = {"ok": False, "detail": "failing", "failed_in_a_row": 5}
    home.status_file.write_text(json.dumps({"recent_iterations": [], "health": sick}))
    settings = load_settings(tmp_path)
    assert status.gather(settings)["health"] is None  # its last words, not its health
    home.daemon_pid.write_text(str(os.getpid()))
    with home.daemon_pid.open() as held:  # the lock a running daemon holds
        fcntl.flock(held, fcntl.LOCK_EX)
        assert status.gather(settings)["health"] == sick
    home.status_file.write_text('{"health": {"ok": "no"}}')
    assert status.recorded_health(home) is None  # a file that says nothing sure is no verdict


def test_status_shows_todays_spend_the_week_the_costliest_and_a_pause():
    from executive.daemon.status import spend_lines

    days = [{"date": f"2026-12-0{d}", "cost_usd": c} for d, c in zip(range(1, 8), [0, 0, 0.1, 0, 0, 0.2, 0.4], strict=True)]  # fmt: skip
    today = {
        "cost_usd": 0.4,
        "runs": 3,
        "not_reported": 1,
        "input_tokens": 900,
        "output_tokens": 40,
    }
    spend = {
        "today": {"date": "2026-12-07", **today},
        "days": days,
        "bundles": [{"bundle": "costly", "cost_usd": 0.5}, {"bundle": "cheap", "cost_usd": 0.1}],
        "hooks": [{"hook": "pre-spawn-pack", "cost_usd": 0.05}],
        "caps": {"day_usd": 0.4},
        "timezone": "Europe/Berlin",
        "paused": {"reason": "paused: daily budget", "until": "2026-12-08T00:00:00+01:00"},
    }
    assert spend_lines(spend) == [
        "spend    today $0.4000 of $0.4 a day: 3 paid runs, 1 not reported, 900 in / 40 out "
        "tokens (Europe/Berlin)",
        "         paused: daily budget: resumes 2026-12-08T00:00:00+01:00",
        "         last 7 days ▁▁▃▁▁▅█ $0.7000 (2026-12-01 to 2026-12-07)",
        "         costliest bundles: costly $0.5000, cheap $0.1000",
        "         costliest hooks: pre-spawn-pack $0.0500",
    ]
    assert spend_lines(None) == []
