"""`doctor`'s isolation check: which mode is active, why, and a warning for none."""

from __future__ import annotations

import pytest

from executive.daemon.doctor import check_isolation, failed
from executive.settings import load_settings
from executive.workers import sandbox


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
        " Unix sockets refused (seccomp)"
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
        " Unix sockets refused (seccomp)"
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
