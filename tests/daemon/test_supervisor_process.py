"""The real daemon in a real process: signals, readiness, JSON lines, redaction."""

from __future__ import annotations

import json
import signal
import socket

import pytest

from tests.conftest import events, json_lines, set_env
from tests.daemonproc import Daemon


@pytest.fixture
def idle_env():
    return {"IDLE_SLEEP_SECONDS": "30", "EXECUTIVE_SHUTDOWN_GRACE_SECONDS": "5"}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_the_idle_daemon_cleanly(home, idle_env, signum):
    daemon = Daemon(home, idle_env)
    try:
        daemon.wait_for("daemon.ready")
        daemon.signal(signum)
        assert daemon.wait(timeout=120) == 0  # a hang guard: it stops in well under a second
    finally:
        daemon.kill()
    records = json_lines("".join(daemon.lines))
    [requested] = events(records, "shutdown.requested")
    assert requested["signal"] == signum.name
    assert events(records, "daemon.stopped")
    assert "Traceback" not in daemon.stderr


def test_sigusr2_exits_zero_after_the_iteration(home, idle_env):
    daemon = Daemon(home, idle_env)
    try:
        daemon.wait_for("daemon.ready")
        daemon.signal(signal.SIGUSR2)
        assert daemon.wait(timeout=10) == 0
    finally:
        daemon.kill()
    stopped = events(json_lines("".join(daemon.lines)), "daemon.stopped")
    assert stopped[0]["reason"].startswith("SIGUSR2")


def test_ready_watchdog_and_stopping_reach_the_notify_socket(home, tmp_path, idle_env):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(20)
    daemon = Daemon(home, {**idle_env, "NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "400000"})
    messages: list[str] = []
    try:
        while "READY=1" not in "\n".join(messages):
            messages.append(sock.recv(4096).decode())
        while messages.count("WATCHDOG=1") < 2:
            messages.append(sock.recv(4096).decode())
        daemon.signal(signal.SIGTERM)
        while "STOPPING=1" not in messages:
            messages.append(sock.recv(4096).decode())
        assert daemon.wait(timeout=10) == 0
    finally:
        daemon.kill()
        sock.close()
    ready = next(m for m in messages if m.startswith("READY=1"))
    assert messages.index(ready) < messages.index("WATCHDOG=1") < messages.index("STOPPING=1")


def test_every_stdout_line_is_json_and_no_secret_leaks(home, idle_env):
    secret = "m0-supersecretvalue0123456789"
    token = "tok-abcdef123456"
    set_env(home, V3_MEM0_API_KEY=secret)
    # A (malformed) bundle named after the secret makes the daemon log its name when it
    # quarantines it, so the test proves redaction, not the absence of an occasion to leak.
    (home / "workspace" / "ondeck" / f"leak-{token}").mkdir()
    daemon = Daemon(home, {**idle_env, "SERVICE_TOKEN": token})
    try:
        daemon.wait_for("daemon.ready")
        daemon.wait_for("bundle.quarantined")
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(timeout=10) == 0
    finally:
        daemon.kill()
    output = "".join(daemon.lines) + daemon.stderr
    json_lines("".join(daemon.lines))
    assert secret not in output
    assert token not in output
    assert "[REDACTED]" in output


def test_run_once_runs_one_iteration_and_exits(home):
    from tests.conftest import run_cli

    # A misspelt key in the supervisor's environment is named at start, with the real name.
    result = run_cli("--home", str(home), "run", "--once", env={"V3_MEM_HOOK_FAILDIAG": "true"})
    assert result.returncode == 0, result.stderr
    records = json_lines(result.stdout)
    assert len(events(records, "daemon.starting")) == 1
    [typo] = events(records, "config.unknown_key")
    assert typo["key"] == "V3_MEM_HOOK_FAILDIAG"
    assert typo["did_you_mean"] == "V3_MEM_HOOK_FAIL_DIAG"
    assert typo["source"] == "environment"
    assert events(records, "daemon.stopped")
    status = json.loads((home / ".state" / "status.json").read_text())
    assert status["recent_iterations"][0]["iteration"] == 1


def test_a_second_daemon_on_the_same_home_is_refused(home, idle_env):
    first = Daemon(home, idle_env)
    try:
        first.wait_for("daemon.ready")
        from tests.conftest import run_cli

        second = run_cli("--home", str(home), "run", "--once")
        # Its own code (PM2's stop_exit_codes, systemd's RestartPreventExitStatus): no loop.
        assert second.returncode == 4
        assert "another executive daemon" in second.stderr and "exits 4" in second.stderr
        # A bad value written into the file later hides nothing: the running daemon is shown,
        # then the problem, and the exit (2, documented) says the next start would fail.
        set_env(home, MAX_RETRIES="ten")
        for args in (["status"], ["status", "--probe"]):
            shown = run_cli("--home", str(home), *args)
            assert shown.returncode == 2, shown.stdout + shown.stderr
            assert "daemon   running, pid" in shown.stdout
            assert "config   INVALID now" in shown.stdout
            assert "MAX_RETRIES='ten' (from " in shown.stdout
        as_json = json.loads(run_cli("--home", str(home), "status", "--json").stdout)
        assert as_json["source"] == "daemon"
        assert [p["variable"] for p in as_json["configuration_errors"]] == ["MAX_RETRIES"]
        first.signal(signal.SIGTERM)
        assert first.wait(timeout=10) == 0
    finally:
        first.kill()


@pytest.mark.store
def test_ready_comes_after_the_store_opens_and_names_the_hooks(home, idle_env):
    set_env(home, V3_MEMORY_ENABLED="true", V3_MEM_HOOK_PRE_SPAWN="true")
    daemon = Daemon(home, idle_env)
    try:
        ready = daemon.wait_for("daemon.ready", timeout=120)
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0
    finally:
        daemon.kill()
    names = [r.get("event") for r in json_lines("".join(daemon.lines))]
    assert names.index("store.opened") < names.index("daemon.ready")
    # The word index is built before READY (an empty store here), not on the first pack;
    # the store's health is told (empty, and the ledgers confirm nothing: ok).
    assert ready["store"] == {
        "backend": "local",
        "opened": True,
        "word_index": 0,
        "health": "ok",
    }
    assert ready["hooks"]["pre-spawn-pack"] == "on"
    assert ready["hooks"]["post-run-harvest"] == "V3_MEM_HOOK_POST_RUN off"
    # Start-up's objects (modules, classes, the open store) are out of the collector's sight.
    assert ready["frozen_objects"] > 10_000
    # The process leaves right after closing (no interpreter teardown), with nothing unsaid.
    assert names[-1] == "daemon.stopped"


def test_status_asks_the_running_daemon_and_says_when_a_restart_is_needed(home, idle_env):
    from tests.conftest import run_cli

    set_env(home, V3_MEM_HOOK_FAIL_DIAG="false")
    daemon = Daemon(home, idle_env)
    try:
        daemon.wait_for("daemon.ready")
        # An operator edits the file and forgets the restart.
        set_env(home, V3_MEMORY_ENABLED="true", V3_MEM_HOOK_FAIL_DIAG="true")
        result = run_cli("--home", str(home), "status", "--json")
        text = run_cli("--home", str(home), "status").stdout
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(timeout=10) == 0
    finally:
        daemon.kill()
    report = json.loads(result.stdout)
    assert report["source"] == "daemon"
    assert report["daemon"]["pid"] == daemon.proc.pid
    assert report["daemon"]["restart_needed"] is True
    diag = report["hooks"]["failure-diagnosis"]
    # The running value, and where it came from: the file as it was at start.
    assert (diag["on"], diag["value"]) == (False, False)
    assert diag["source"].endswith(".env.executive")
    assert "restart needed" in text
    assert "V3_MEM_HOOK_FAIL_DIAG=false from" in text


def test_status_without_a_daemon_says_so_and_shows_the_files_view(home):
    from tests.conftest import run_cli

    set_env(home, V3_MEMORY_ENABLED="true", V3_MEM_HOOK_POST_RUN="true")
    result = run_cli("--home", str(home), "status")
    assert result.returncode == 0
    assert "not running" in result.stdout
    assert "this is what the files say" in result.stdout
    assert "V3_MEM_HOOK_POST_RUN=true from" in result.stdout
