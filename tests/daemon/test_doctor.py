"""`executive doctor` checks the store for real: opened, embedder run, memories counted."""

from __future__ import annotations

import json
import signal

import pytest

from tests.conftest import run_cli, set_env
from tests.daemonproc import Daemon
from tests.memory.payloads import partial

pytestmark = pytest.mark.store


def test_doctor_opens_the_store_counts_memories_and_runs_the_embedder(home):
    set_env(home, V3_MEMORY_ENABLED="true")
    added = run_cli("--home", str(home), "mem", "add", "--payload", json.dumps(partial("semantic")))
    assert added.returncode == 0, added.stdout + added.stderr
    result = run_cli("--home", str(home), "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(result.stdout)}
    store = checks["memory store"]
    assert store["ok"], store
    assert "embedder loaded: 1 memories" in store["detail"]
    assert "1 semantic" in store["detail"]
    # The embedded store has every optional power a pack draws on.
    assert checks["store powers"] == {**checks["store powers"], "ok": True}
    assert checks["store powers"]["detail"] == "all: search_scopes, prepare, words"


def test_doctor_asks_the_running_daemon_which_holds_the_store(home):
    set_env(home, V3_MEMORY_ENABLED="true", V3_MEM_HOOK_PRE_SPAWN="true")
    daemon = Daemon(home, {"IDLE_SLEEP_SECONDS": "30"})
    try:
        daemon.wait_for("daemon.ready", timeout=120)
        result = run_cli("--home", str(home), "doctor", "--json")
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    finally:
        daemon.kill()
    checks = {c["name"]: c for c in json.loads(result.stdout)}
    via = checks["memory store (via the daemon)"]
    assert via["ok"] and "0 memories" in via["detail"]


def test_doctor_says_what_a_pack_loses_on_a_store_without_a_power():
    from executive.daemon.doctor_store import _powers
    from executive.memory.store.base import CAPABILITIES

    lacks = [c for c in CAPABILITIES if c.name == "words"]
    found = _powers(lacks)
    assert found.ok and found.detail.startswith("no words: no keyword pass")
