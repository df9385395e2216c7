"""A part of the daemon that fails is reported, never silent: a dashboard whose port is taken.

The daemon runs on without it and keeps trying to bind (with a backoff), and ``status``
(exit 3, "DEGRADED"), ``doctor`` (a failed part with its fix) and the log say so; once the
port is free the dashboard comes up and ``/healthz`` answers.
"""

from __future__ import annotations

import json
import signal
import socket

import httpx

from tests.conftest import run_cli
from tests.daemonproc import Daemon
from tests.loop.homes import add_bundle, make_home


def _taken() -> socket.socket:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder


def test_doctor_says_the_dashboard_port_is_taken_before_the_daemon_starts(tmp_path):
    holder = _taken()
    try:
        port = holder.getsockname()[1]
        home = make_home(
            tmp_path, EXECUTIVE_DASHBOARD="true", EXECUTIVE_DASHBOARD_BIND=f"127.0.0.1:{port}"
        )
        env = {"EXECUTIVE_DASHBOARD": "true", "WORKER_VENDOR": "command"}
        doctor = run_cli("--home", str(home), "doctor", "--json", env=env)
    finally:
        holder.close()
    [check] = [c for c in json.loads(doctor.stdout) if c["name"] == "dashboard address"]
    assert not check["ok"] and "Address already in use" in check["detail"]
    assert "EXECUTIVE_DASHBOARD_BIND" in check["fix"] and doctor.returncode == 1


def test_a_dashboard_that_cannot_bind_is_reported_retried_and_comes_up(tmp_path):
    holder = _taken()
    port = holder.getsockname()[1]
    env = {"EXECUTIVE_DASHBOARD": "true"}
    home = make_home(tmp_path, EXECUTIVE_DASHBOARD_BIND=f"127.0.0.1:{port}")
    add_bundle(home, "works", "echo ok > out.txt\n", verifiers=[{"run": "test -s out.txt"}])
    daemon = Daemon(home, env)
    try:
        failed = daemon.wait_for("dashboard.failed", timeout=60)
        assert failed["level"] == "error" and "EXECUTIVE_DASHBOARD_BIND" in failed["fix"]
        daemon.wait_for("goal.completed", timeout=120, bundle="works")  # the loop runs on
        status = run_cli("--home", str(home), "status", env=env)
        assert status.returncode == 3, status.stdout + status.stderr
        assert "health   DEGRADED: dashboard: cannot bind" in status.stdout
        report = json.loads(run_cli("--home", str(home), "status", "--json", env=env).stdout)
        assert "Address already in use" in report["health"]["degraded"]["dashboard"]
        doctor = run_cli(
            "--home", str(home), "doctor", "--json", env={**env, "WORKER_VENDOR": "command"}
        )
        [part] = [c for c in json.loads(doctor.stdout) if c["name"] == "daemon part: dashboard"]
        assert not part["ok"] and "ss -ltnp" in part["fix"]

        holder.close()  # the port is free: the next try binds it
        daemon.wait_for("dashboard.listening", timeout=120)
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
        assert health.status_code == 200 and health.json()["status"] == "ok"
        status = run_cli("--home", str(home), "status", "--probe", env=env)
        assert status.returncode == 0 and "health   ok" in status.stdout
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(60) == 0
    finally:
        holder.close()
        daemon.kill()
    # Stopped: a supervisor's probe now says so.
    assert run_cli("--home", str(home), "status", "--probe", env=env).returncode == 1
