"""`doctor`'s isolation checks: which mode is active, why, a warning for none, a failure
for a home the worker account can read, and which worker limits hold."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from executive.daemon.doctor import check_isolation, check_limits, failed
from executive.settings import load_settings
from executive.workers.isolation import sandbox
from tests.conftest import run_cli, scaffolded


def test_none_is_reported_as_a_warning_with_the_fix(home):
    [check] = check_isolation(load_settings(home, worker_isolation="none"))
    assert not check.ok and check.warning and not failed([check])
    assert check.detail.startswith("none:") and "bubblewrap" in check.fix


@pytest.mark.skipif(sandbox.choose("auto").mode != "sandbox", reason="bubblewrap cannot run here")
def test_auto_reports_the_sandbox_and_the_network(home):
    [check] = check_isolation(load_settings(home, worker_network=False))
    assert check.ok and check.detail.startswith("sandbox: bubblewrap works")
    assert check.detail.endswith(
        "network off: no way out of the sandbox (EXECUTIVE_WORKER_NETWORK=false);"
        " Unix sockets refused (seccomp: socket(AF_UNIX) and datagram pairs)"
    )


@pytest.mark.skipif(sandbox.choose("auto").mode != "sandbox", reason="bubblewrap cannot run here")
def test_the_allow_list_and_the_carried_endpoint_are_shown(home, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8123")
    settings = load_settings(
        home,
        worker_allow_hosts="api.anthropic.com,*.pythonhosted.org,pypi.org:443",
        worker_env="ANTHROPIC_BASE_URL",
    )
    [check] = check_isolation(settings)
    assert check.ok
    assert check.detail.endswith(
        "network through the egress proxy to api.anthropic.com, *.pythonhosted.org, pypi.org:443;"
        " the API endpoint 127.0.0.1:8123 on this host's loopback, carried in;"
        " Unix sockets refused (seccomp: socket(AF_UNIX) and datagram pairs)"
    )
    # Not passed to workers, the endpoint is not theirs to reach.
    [check] = check_isolation(load_settings(home))
    assert "network through the egress proxy to api.anthropic.com;" in check.detail


def test_a_required_mode_that_cannot_run_fails(home):
    [check] = check_isolation(
        load_settings(home, worker_isolation="user", worker_user="no-such-acct")
    )
    assert not check.ok and not check.warning and failed([check])
    assert "no account" in check.detail


def test_each_worker_limit_is_reported_and_one_that_does_not_hold_only_warns(home):
    checks = check_limits(load_settings(home, worker_isolation="none"))
    names = [c.name for c in checks]
    for limit in ["processes", "file size", "run log", "output folder total"]:
        assert f"worker limit: {limit}" in names
    assert not failed(checks)
    [total] = [c for c in checks if c.name == "worker limit: output folder total"]
    assert not total.ok and total.warning and "EXECUTIVE_OUTPUT_ROOT" in total.fix


@pytest.mark.skipif(
    os.geteuid() != 0 or sandbox.account_ids("nobody") is None, reason="needs root and nobody"
)
def test_user_mode_fails_while_the_worker_account_can_read_the_home():
    # Break 8: the home was 0755 and doctor said all was well.
    scratch = Path(tempfile.mkdtemp(prefix="executive-doctor-", dir="/var/tmp"))
    try:
        scratch.chmod(0o755)
        home = scaffolded(scratch / "home")
        assert stat.S_IMODE(home.stat().st_mode) == 0o700  # as init made it
        env = {"EXECUTIVE_WORKER_ISOLATION": "user", "EXECUTIVE_OUTPUT_ROOT": str(scratch / "out")}
        closed = run_cli("--home", str(home), "doctor", "--json", env=env)
        home.chmod(0o755)
        opened = run_cli("--home", str(home), "doctor", "--json", env=env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    name = "the worker account cannot read the home"
    [ok] = [c for c in json.loads(closed.stdout) if c["name"] == name]
    [bad] = [c for c in json.loads(opened.stdout) if c["name"] == name]
    assert ok["ok"] and not bad["ok"] and not bad["warning"]
    assert bad["fix"] == f"chmod 700 {home}"
    assert opened.returncode != 0
