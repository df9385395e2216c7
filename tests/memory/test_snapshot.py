from __future__ import annotations

import json
import stat
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from executive.memory import snapshot as snapshots
from executive.memory.rebuild import RebuildError, restore
from executive.memory.store.base import Filter
from tests.memory.conftest import fill, open_store

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
async def thousand(tmp_path_factory):
    root = tmp_path_factory.mktemp("snap1000")
    store = await open_store(root)
    await fill(store, 1000)
    yield store, root
    await store.close()


async def test_a_snapshot_of_a_thousand_memories_holds_all_with_their_history(thousand, tmp_path):
    store, _ = thousand
    result = await snapshots.take(store, tmp_path, user_id="agent-test")
    document = json.loads(Path(result["path"]).read_text())
    assert result["total"] == document["total"] == len(document["memories"]) == 1000
    assert document["history_failures"] == 0
    assert all(entry["history"][0]["event"] == "ADD" for entry in document["memories"])
    assert len({entry["memory"]["metadata"]["key"] for entry in document["memories"]}) == 1000
    assert set(document) == {
        "snapshot_date",
        "snapshot_at",
        "user_id",
        "total",
        "history_failures",
        "memories",
    }
    assert stat.S_IMODE(Path(result["path"]).stat().st_mode) == 0o600


async def test_restore_into_an_empty_store_gives_the_same_keys(thousand, tmp_path, harvester):
    store, _ = thousand
    result = await snapshots.take(store, tmp_path / "snaps", user_id="agent-test")
    empty = harvester._store  # the per-test store, empty
    restored = await restore(empty, harvester, snapshots.load(Path(result["path"])))
    assert restored["memories"] == 1000
    before = {r.key: (r.text, r.created_at) for r in await store.list(Filter(user_id="agent-test"))}
    after = {r.key: (r.text, r.created_at) for r in await empty.list(Filter(user_id="agent-test"))}
    assert after == before
    with pytest.raises(RebuildError, match="not empty"):
        await restore(empty, harvester, snapshots.load(Path(result["path"])))


async def test_a_same_day_rerun_replaces_and_a_failed_run_leaves_the_previous_file(
    store, tmp_path, monkeypatch
):
    tmp_path = tmp_path / "snaps"
    await fill(store, 3)
    first = await snapshots.take(store, tmp_path, user_id="u")
    await fill(store, 5, user_id="other")
    second = await snapshots.take(store, tmp_path, user_id="u")
    assert (
        first["path"] == second["path"]
        and json.loads(Path(second["path"]).read_text())["total"] == 8
    )
    good = Path(second["path"]).read_bytes()

    def torn(self, target):  # the rename never happens: as if killed after the temp file
        raise OSError("killed mid-snapshot")

    monkeypatch.setattr(Path, "replace", torn)
    await fill(store, 2, user_id="third")
    with pytest.raises(OSError):
        await snapshots.take(store, tmp_path, user_id="u")
    monkeypatch.undo()
    assert Path(second["path"]).read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == [Path(second["path"]).name]  # no temp file left


def test_overdue_when_the_latest_is_older_than_a_day(tmp_path):
    assert snapshots.overdue(tmp_path, date(2026, 12, 2))
    (tmp_path / "2026-12-01.json").write_text("{}")
    assert not snapshots.overdue(tmp_path, date(2026, 12, 2))
    assert snapshots.overdue(tmp_path, date(2026, 12, 3))
    assert snapshots.latest(tmp_path) == date(2026, 12, 1)


async def test_the_listing_is_checked_against_the_count(store, tmp_path):
    class Short:
        async def list(self, where=None):
            return (await store.list(where))[:-1]

        async def count(self, where=None):
            return await store.count(where)

        async def history(self, memory_id):
            return []

    await fill(store, 4)
    folder = tmp_path / "snaps"
    with pytest.raises(snapshots.SnapshotError, match="returned 3 memories but the store counts 4"):
        await snapshots.take(Short(), folder, user_id="u", now=datetime.now(UTC))
    assert not folder.exists()
