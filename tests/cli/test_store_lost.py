"""A lost embedded store is noticed everywhere, and the snapshot never buries the good copy.

The real embedded store, the real daemon and CLI: three memories written and snapshotted,
the store's folder removed; the files' view of ``status``, ``doctor``, the daemon's start,
its ``status``, ``/healthz``, ``/metrics`` and its snapshot job each name it with its fix, the good snapshot stays, and
``mem rebuild`` brings the memories back.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import run_cli, set_env
from tests.dashboard.conftest import start
from tests.memory.payloads import partial

pytestmark = pytest.mark.store


def git(home, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=home, capture_output=True, text=True, check=True
    ).stdout


def cli(home, *args):
    return run_cli("--home", str(home), *args)


def test_a_lost_store_is_named_everywhere_and_the_good_snapshot_stays(home):
    set_env(home, V3_MEMORY_ENABLED="true", IDLE_SLEEP_SECONDS="30")
    batch = [partial("episodic"), partial("semantic"), partial("procedural")]
    assert cli(home, "mem", "add", "--batch", json.dumps(batch)).returncode == 0
    taken = json.loads(cli(home, "mem", "snapshot").stdout)
    assert taken["total"] == 3
    # The good copy is two days old: the daemon's start catches the daily job up.
    folder = home / "memory" / "snapshots"
    old_day = (datetime.now(UTC) - timedelta(days=2)).date().isoformat()
    good = folder / f"{old_day}.json"
    Path(taken["path"]).rename(good)  # the day it was taken, whatever the clock says now
    good_text = good.read_text()
    git(home, "add", "-A", "memory/snapshots")
    git(home, "commit", "-q", "-m", "the good copy, two days old")
    before = git(home, "rev-parse", "HEAD").strip()

    shutil.rmtree(home / ".state" / "store")

    # The files' view (no daemon): the folder is gone, the ledgers confirm three.
    files_view = json.loads(cli(home, "status", "--json").stdout)
    assert files_view["store"]["health"]["state"] == "short"
    assert files_view["store"]["health"]["expected"] == 3
    shown = cli(home, "status")
    assert "MISSING MEMORIES" in shown.stdout and "mem rebuild" in shown.stdout
    assert shown.returncode == 3  # degraded, as docs/commands.md says, daemon or not
    doctor = cli(home, "doctor", "--json")
    assert doctor.returncode == 1
    [store] = [c for c in json.loads(doctor.stdout) if c["name"] == "memory store"]
    assert not store["ok"] and "confirm 3 memories" in store["detail"]
    assert "mem rebuild" in store["fix"]
    assert not (home / ".state" / "store").exists(), "doctor must not make an empty store"

    served = start(home)  # the daemon, with its dashboard
    daemon = served.daemon
    try:
        short = daemon.wait_for("store.short", timeout=120)
        assert (short["total"], short["expected"]) == (0, 3)
        assert "mem rebuild" in short["fix"]
        refused = daemon.wait_for("job.finished", timeout=120, job="daily-snapshot.catch-up")
        assert refused["result"]["ok"] is False
        assert f"{old_day}.json holds 3" in refused["result"]["refused"]
        daemon.wait_for("snapshot.refused")

        live = cli(home, "status", "--json")
        assert live.returncode == 3, live.stdout  # degraded: the loop works, memory is short
        report = json.loads(live.stdout)
        assert report["source"] == "daemon"
        assert report["store"]["health"]["missing"] == 3
        assert "mem rebuild" in report["health"]["degraded"]["store"]
        via = {c["name"]: c for c in json.loads(cli(home, "doctor", "--json").stdout)}
        assert not via["memory store (via the daemon)"]["ok"]
        healthz = served.get("/healthz")
        assert healthz.status_code == 200 and healthz.json()["status"] == "degraded"
        assert "mem rebuild" in healthz.json()["degraded"]["store"]
        assert "executive_store_memories_missing 3.0" in served.get("/metrics").text

        by_hand = cli(home, "mem", "snapshot")
        assert by_hand.returncode != 0 and "mem rebuild" in by_hand.stdout + by_hand.stderr

        rebuilt = json.loads(cli(home, "mem", "rebuild").stdout)
        assert rebuilt["memories"] == 3
        healed = json.loads(cli(home, "status", "--json").stdout)
        assert healed["store"]["health"]["state"] == "ok" and healed["store"]["total"] == 3
        daemon.signal(signal.SIGTERM)
        assert daemon.wait(30) == 0
    finally:
        daemon.kill()

    assert sorted(p.name for p in folder.glob("*.json")) == [good.name]
    assert good.read_text() == good_text
    # Nothing the daemon committed since touched a snapshot.
    assert "memory/snapshots/" not in git(home, "log", "--name-only", "--format=%s", f"{before}..")
