"""Durability through the real daemon: the snapshot catch-up, replay at start, the CLI tools."""

from __future__ import annotations

import json
import signal
import stat
from pathlib import Path

from executive.memory.write.envelope import stamp
from executive.memory.write.ledger import HarvestLedger
from executive.settings import load_settings
from tests.conftest import run_cli, set_env
from tests.daemonproc import Daemon
from tests.memory.payloads import partial


def mem(home, *args):
    return run_cli("--home", str(home), "mem", *args)


def test_the_daemon_catches_up_the_snapshot_and_replays_pending_writes_at_start(home):
    set_env(home, V3_MEMORY_ENABLED="true", IDLE_SLEEP_SECONDS="30")
    assert (
        mem(
            home, "add", "--batch", json.dumps([partial("episodic"), partial("semantic")])
        ).returncode
        == 0
    )
    # A write the store never confirmed: its PENDING line, and nothing after (a kill).
    settings = load_settings(home)
    from executive.memory.write.classify import validate
    from executive.memory.write.envelope import Defaults

    payload = validate(stamp(partial("procedural"), Defaults(user_id=settings.user_id)))
    HarvestLedger(home / "ledgers" / "harvest-runs").record(
        {
            "op": "add",
            "attempt": "killed-1",
            "key": payload.key,
            "status": "PENDING",
            "payload": payload.as_dict(),
        }
    )
    assert (
        json.loads(run_cli("--home", str(home), "status", "--json").stdout)["pending_writes"] == 1
    )

    daemon = Daemon(home)
    try:
        taken = daemon.wait_for("job.finished", timeout=120, job="daily-snapshot.catch-up")
        daemon.wait_for("job.finished", timeout=120, job="replay-pending-writes.catch-up")
        listed = json.loads(mem(home, "list", "--json").stdout)
        assert listed["count"] == 3
        drift = mem(home, "drift")
        assert drift.returncode == 0 and json.loads(drift.stdout)["clean"]
        dry = json.loads(mem(home, "backfill", "--lane", "A", "--dry-run").stdout)
        assert len(dry["lanes"]["A"]["payloads"]) == 7
        status = json.loads(run_cli("--home", str(home), "status", "--json").stdout)
        assert status["pending_writes"] == 0 and status["daemon"]["running"]
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    finally:
        daemon.kill()
    # The day it was taken, whatever the clock says now (a run across midnight UTC).
    snap = Path(taken["result"]["path"])
    assert snap.parent.resolve() == (home / "memory" / "snapshots").resolve()
    assert stat.S_IMODE(snap.stat().st_mode) == 0o600
    assert json.loads(snap.read_text())["total"] == 2  # taken before the replay landed, or after
    assert (
        json.loads(run_cli("--home", str(home), "status", "--json").stdout)["last_snapshot"]
        == snap.stem
    )


def test_purge_asks_on_a_terminal_and_needs_yes_otherwise(home):
    set_env(home, V3_MEMORY_ENABLED="true")
    refused = mem(home, "purge", "--env", "test")
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert mem(home, "purge").returncode == 1
    assert (
        mem(
            home, "add", "--payload", json.dumps(partial("semantic", metadata={"env": "test"}))
        ).returncode
        == 0
    )
    # --dry-run counts what would go, by type, and deletes nothing (no --yes needed).
    preview = json.loads(mem(home, "purge", "--env", "test", "--dry-run").stdout)
    assert preview == {"dry_run": True, "would_delete": 1, "by_type": {"semantic": 1}}
    purged = json.loads(mem(home, "purge", "--env", "test", "--yes").stdout)
    assert (purged["matched"], purged["deleted"]) == (1, 1)
    snapshot = json.loads(mem(home, "snapshot").stdout)
    assert snapshot["total"] == 0
    rebuilt = json.loads(mem(home, "rebuild").stdout)
    assert rebuilt["memories"] == 0  # the purge is in the ledger: the rebuild keeps it gone
