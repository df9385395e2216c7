"""The operator's bundle lifecycle, end to end: backoff, retry with a fresh count, cancel."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess

import pytest

from tests.conftest import REPO, json_lines, run_cli
from tests.daemonproc import Daemon
from tests.loop.homes import add_bundle, events, make_home, outputs

FAILS = 'echo "error: the mirror is down" >&2\nexit 1\n'


def once(home):
    result = run_cli("--home", str(home), "run", "--once")
    assert result.returncode == 0, result.stderr
    return result


def bundle(home, *args):
    return run_cli("--home", str(home), "bundle", *args)


def test_a_failing_bundle_backs_off_while_the_others_run(tmp_path):
    home = make_home(tmp_path, EXECUTIVE_RETRY_BACKOFF_SECONDS="3600")
    add_bundle(home, "flaky", FAILS, priority="P1")
    add_bundle(home, "steady", "echo ok > out.txt\n", priority="P2")
    failed = once(home)  # flaky fails, and waits an hour before its next attempt
    assert len(events(home, "STEP_FAILED", bundle="flaky")) == 1
    state = json.loads((home / "workspace/in-progress/P1/flaky/STEPS.json").read_text())
    retry_after = state["steps"][0]["retry_after"]
    [scheduled] = [r for r in json_lines(failed.stdout) if r["event"] == "step.retry_scheduled"]
    assert (scheduled["wait_seconds"], scheduled["retry_after"]) == (3600, retry_after)
    once(home)  # the lower-priority bundle runs meanwhile
    assert events(home, "GOAL_COMPLETED", bundle="steady")
    once(home)  # nothing runnable: flaky is still waiting, no attempt spent
    assert len(events(home, "STEP_FAILED", bundle="flaky")) == 1
    listed = json.loads(bundle(home, "list", "--json").stdout)
    assert {r["slug"]: r["retry_after"] != "" for r in listed} == {"flaky": True, "steady": False}
    [flaky] = [r for r in listed if r["slug"] == "flaky"]
    # Counted from now, whenever the listing runs: within the hour, until the scheduled time.
    assert 0 < flaky["wait_seconds"] <= 3600 and flaky["retry_after"] == retry_after
    text = bundle(home, "list").stdout
    assert re.search(rf"waits \S+ more \(until {re.escape(retry_after)}\)", text), text
    assert "completed completed" not in text  # the folder says it; the state adds nothing
    # A wait whose time has passed is no wait: it is never shown as a time gone by.
    path = home / "workspace/in-progress/P1/flaky/STEPS.json"
    state = json.loads(path.read_text())
    state["steps"][0]["retry_after"] = "2020-01-01T00:00:00Z"
    path.write_text(json.dumps(state))
    [flaky] = [r for r in json.loads(bundle(home, "list", "--json").stdout) if r["slug"] == "flaky"]
    assert (flaky["wait_seconds"], flaky["retry_after"]) == (0, "")
    assert "waits" not in bundle(home, "list").stdout
    assert "waits" not in bundle(home, "show", "flaky").stdout


def _watch_recipe() -> str:
    recipe = re.search(r"make run \| jq -c '([^']+)'", (REPO / "README.md").read_text())
    assert recipe is not None
    return recipe[1]


def test_the_watch_recipe_keeps_a_failure_s_signal_and_reason():
    assert "signal" in _watch_recipe() and "reason" in _watch_recipe()


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_watch_recipe_run_with_jq_on_a_real_log_shows_why_a_step_failed(tmp_path):
    home = make_home(tmp_path, EXECUTIVE_RETRY_BACKOFF_SECONDS="3600")
    add_bundle(home, "flaky", FAILS, priority="P1")
    log = once(home).stdout
    shown = subprocess.run(
        ["jq", "-c", _watch_recipe()], input=log, capture_output=True, text=True, check=True
    ).stdout
    [line] = [json.loads(x) for x in shown.splitlines() if '"step.failed"' in x]
    assert line["bundle"] == "flaky" and line["attempt"] == 1
    assert "the mirror is down" in line["signal"]


def test_retry_starts_a_blocked_bundle_from_zero_attempts(tmp_path):
    home = make_home(tmp_path)
    add_bundle(home, "doomed", FAILS, max_attempts=2)
    once(home)
    once(home)
    assert events(home, "GOAL_BLOCKED", bundle="doomed")
    shown = bundle(home, "show", "doomed")
    assert "error: the mirror is down" in shown.stdout
    assert "bundle retry doomed" in shown.stdout

    needs_you = home / "workspace" / "needs-you.md"
    assert "RESOLVED" not in needs_you.read_text()
    retried = bundle(home, "retry", "doomed")
    assert retried.returncode == 0, retried.stderr
    [heading] = [x for x in needs_you.read_text().splitlines() if x.endswith("blocked: doomed")]
    assert "RESOLVED" in heading and ", retried · " in heading
    [event] = events(home, "BUNDLE_RETRIED", bundle="doomed")
    assert event["attempts_reset"] == 2
    once(home)
    # One failure after the retry: attempt 1 of 2 again, not blocked at once as before.
    assert len(events(home, "GOAL_BLOCKED", bundle="doomed")) == 1
    state = json.loads((home / "workspace/in-progress/P3/doomed/STEPS.json").read_text())
    assert state["steps"][0]["attempts"] == 1
    assert bundle(home, "retry", "doomed").returncode == 1  # not blocked now


def test_cancel_without_a_daemon_parks_the_bundle(tmp_path):
    home = make_home(tmp_path)
    add_bundle(home, "unwanted", "echo ok > out.txt\n")
    result = bundle(home, "cancel", "unwanted")
    assert result.returncode == 0, result.stderr
    assert (home / "workspace/blocked/unwanted/PROMPT.md").exists()
    assert events(home, "BUNDLE_CANCELLED", bundle="unwanted")
    once(home)
    assert not events(home, "STEP_STARTED", bundle="unwanted")
    assert bundle(home, "cancel", "nothing-here").returncode == 1


def test_the_running_daemon_applies_a_cancel_before_its_next_iteration(tmp_path):
    home = make_home(tmp_path)
    # "busy" holds the daemon in its worker until the test drops a file in its output folder.
    add_bundle(home, "busy", "while [ ! -e go ]; do sleep 0.05; done\necho ok > out.txt\n")
    daemon = Daemon(home)
    try:
        daemon.wait_for("worker.started", bundle="busy")
        add_bundle(home, "unwanted", "echo ok > out.txt\n", priority="P0")
        result = bundle(home, "cancel", "unwanted")
        assert "cancel pending" in result.stdout and "before its next iteration" in result.stdout
        # The running step is in view: its bundle, step, attempt and how long it has run.
        status = run_cli("--home", str(home), "status")
        [line] = [x for x in status.stdout.splitlines() if x.startswith("running  ")]
        assert line.startswith("running  busy (P3) step 1/1 ") and ", attempt 1, for " in line
        listed = {r["slug"]: r for r in json.loads(bundle(home, "list", "--json").stdout)}
        assert listed["busy"]["status"] == "running"
        assert listed["busy"]["running_seconds"] >= 0
        assert listed["unwanted"]["cancel_pending"] and not listed["busy"]["cancel_pending"]
        text = bundle(home, "list").stdout
        assert "attempt 1 running for " in text and "CANCEL PENDING" in text
        # A cancel of the running bundle says it is pending, and status shows it so.
        running = bundle(home, "cancel", "busy")
        assert "cancel pending: busy is running step 1 (attempt 1)" in running.stdout
        status = run_cli("--home", str(home), "status", "--json")
        assert json.loads(status.stdout)["running"][0]["cancel_pending"] is True
        (outputs(home) / "busy" / "go").touch()
        daemon.wait_for("bundle.cancelled", bundle="unwanted")
        daemon.wait_for("goal.completed", bundle="busy")
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    finally:
        daemon.kill()
    assert (home / "workspace/blocked/unwanted").is_dir()
    assert not events(home, "STEP_STARTED", bundle="unwanted")


def test_a_bundle_that_passed_on_its_retry_lists_its_failed_attempt(tmp_path):
    home = make_home(tmp_path, EXECUTIVE_RETRY_BACKOFF_SECONDS="0")
    # Its output folder is kept between attempts: the first leaves a mark and fails.
    add_bundle(home, "twice", "test -f .tried || { touch .tried; exit 1; }\necho ok > out.txt\n")
    once(home)
    once(home)
    assert events(home, "GOAL_COMPLETED", bundle="twice")
    [row] = json.loads(bundle(home, "list", "--json").stdout)
    assert (row["where"], row["attempts"]) == ("completed", 1)  # as `bundle show` says
