"""The daily prune: what it chooses, from names and dates, and that it deletes only that."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from executive.daemon import retention
from executive.home import Home

NOW = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
LIMITS = retention.Limits(worker_logs_days=30, snapshots_days=90, outputs_days=14)


def make(tmp_path):
    home = Home(tmp_path / "home")
    home.ensure()
    outputs = tmp_path / "outputs"
    for day in ("2026-10-01", "2026-11-30"):
        (home.worker_logs / day).mkdir(parents=True)
        (home.worker_logs / day / "c.log").write_text("log")
    home.snapshots.mkdir(parents=True, exist_ok=True)
    for day in ("2026-01-01", "2026-02-01", "2026-11-01"):
        (home.snapshots / f"{day}.json").write_text("{}")
    old = NOW.timestamp() - 30 * 86400
    for slug in ("finished", "still-running", "recent"):
        (outputs / slug).mkdir(parents=True)
    (home.priority_dir("P1") / "still-running").mkdir(parents=True)
    for slug in ("finished", "still-running"):
        os.utime(outputs / slug, (old, old))
    return home, outputs


def test_the_plan_takes_only_what_is_older_than_its_limit(tmp_path):
    home, outputs = make(tmp_path)
    chosen = retention.plan(home, outputs, LIMITS, NOW)
    assert [p.name for p in chosen.worker_logs] == ["2026-10-01"]
    assert [p.name for p in chosen.snapshots] == ["2026-01-01.json", "2026-02-01.json"]
    # An active bundle's folder and a recent one stay.
    assert [p.name for p in chosen.outputs] == ["finished"]


def test_the_newest_snapshot_is_kept_however_old(tmp_path):
    home, outputs = make(tmp_path)
    (home.snapshots / "2026-11-01.json").unlink()
    chosen = retention.plan(home, outputs, LIMITS, NOW)
    assert [p.name for p in chosen.snapshots] == ["2026-01-01.json"]


def test_zero_keeps_everything(tmp_path):
    home, outputs = make(tmp_path)
    keep_all = retention.Limits(worker_logs_days=0, snapshots_days=0, outputs_days=0)
    assert retention.plan(home, outputs, keep_all, NOW).paths() == []


def test_prune_deletes_the_plan_and_never_follows_a_planted_link(tmp_path):
    home, outputs = make(tmp_path)
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    (outputs / "finished" / "link").symlink_to(precious)
    (outputs / "a-link-to-precious").symlink_to(precious)
    old = NOW.timestamp() - 30 * 86400
    os.utime(outputs / "finished", (old, old))  # planting the link touched the folder
    counts = retention.prune(home, outputs, LIMITS, NOW)
    assert counts == {"worker_logs": 1, "snapshots": 2, "outputs": 1, "failed": 0}
    assert not (outputs / "finished").exists()
    assert (precious / "keep.txt").read_text() == "mine"
    assert (outputs / "still-running").is_dir() and (outputs / "recent").is_dir()
    assert (home.worker_logs / "2026-11-30" / "c.log").exists()
    assert sorted(p.name for p in home.snapshots.iterdir()) == ["2026-11-01.json"]
