"""Health tells the truth (issue 30): a real daemon whose iterations keep failing says so.

The failure is one no bundle can be blamed for and the daemon cannot mend: the operator's
cancel-request folder is a file, so every iteration fails before it looks at the queue.
``/healthz`` answers 503 with the error and ``executive status`` exits 1 with it; once a
person removes the file, the next iteration succeeds and both say ok again. ``run --once``
exits 1 when its one iteration failed.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.conftest import run_cli
from tests.dashboard.conftest import start, stop
from tests.loop.homes import add_bundle, events, make_home

ERROR = "NotADirectoryError"


def broken_home(tmp_path: Path) -> tuple[Path, Path]:
    home = make_home(tmp_path, IDLE_SLEEP_SECONDS="0.5", EXECUTIVE_UNHEALTHY_AFTER_FAILURES="3")
    requests = home / ".state" / "requests"
    requests.mkdir(parents=True)
    (requests / "cancel").write_text("not a folder\n")
    add_bundle(home, "queued", "echo hello > hello.txt\n")
    return home, requests / "cancel"


def poll(url: str, done, attempts: int = 600) -> httpx.Response:
    """Ask /healthz until ``done``: bounded by count; each answer is a fresh look at the loop."""
    for _ in range(attempts):
        response = httpx.get(url + "/healthz", timeout=60)
        if done(response):
            return response
        time.sleep(0.05)
    raise AssertionError(f"healthz never changed: {response.status_code} {response.text}")


def test_a_daemon_whose_iterations_keep_failing_is_unhealthy_until_one_succeeds(tmp_path):
    home, culprit = broken_home(tmp_path)
    served = start(home)
    url = served.url.rstrip("/")
    try:
        sick = poll(url, lambda r: r.json()["loop"].startswith("failing:"))
        assert sick.status_code == 503
        body = sick.json()
        assert body["status"] == "unhealthy"
        assert "iterations failed (unhealthy from 3 in a row)" in body["loop"]
        assert ERROR in body["loop"] and "requests/cancel" in body["loop"]

        status = run_cli("--home", str(home), "status")
        assert status.returncode == 1, status.stdout + status.stderr
        [line] = [x for x in status.stdout.splitlines() if x.startswith("health")]
        assert line.startswith("health   UNHEALTHY: failing: the last") and ERROR in line

        culprit.unlink()  # the person's fix
        served.daemon.wait_for("goal.completed", timeout=120, bundle="queued")
        well = poll(url, lambda r: r.status_code == 200)
        assert well.json()["status"] == "ok"
        status = run_cli("--home", str(home), "status")
        assert status.returncode == 0, status.stdout + status.stderr
        assert "health   ok" in status.stdout
    finally:
        stop(served)
    assert [r for r in served.daemon.records if r.get("event") == "iteration.failed"]


def test_run_once_exits_non_zero_when_its_iteration_failed(tmp_path):
    home, culprit = broken_home(tmp_path)
    failed = run_cli("--home", str(home), "run", "--once")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert '"iteration.failed"' in failed.stdout and ERROR in failed.stdout
    assert not events(home, "GOAL_COMPLETED")

    culprit.unlink()
    done = run_cli("--home", str(home), "run", "--once")
    assert done.returncode == 0, done.stdout + done.stderr
    assert events(home, "GOAL_COMPLETED", bundle="queued")
