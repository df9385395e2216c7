"""The embedded store's shard: made without a log, and an older one migrated whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import qdrant_edge as edge
from structlog.testing import capture_logs

from executive.memory.store import mem0_door
from executive.memory.store.shard import KEYWORDS, VECTOR, open_shard

pytestmark = pytest.mark.store

DIMS = 4
OLD_KEYWORDS = ("user_id", "agent_id", "run_id", "app_id", "type", "env", "key", "cohort", "hash")


def points(count: int) -> list[edge.Point]:
    return [
        edge.Point(
            f"00000000-0000-0000-0000-{i:012d}",
            {VECTOR: [1.0, float(i), 0.5, -float(i % 3)]},
            {"data": f"memory {i}", "user_id": "agent", "type": "semantic", "confidence": 0.9},
        )
        for i in range(count)
    ]


def old_shard(path: Path, count: int) -> None:
    """A shard as the store made it before: its log on, vectors loaded, nine keyword indexes."""
    vectors = {VECTOR: edge.EdgeVectorParams(size=DIMS, distance=edge.Distance.Cosine)}
    shard = edge.EdgeShard.create(str(path), edge.EdgeConfig(vectors=vectors))
    for name in OLD_KEYWORDS:
        shard.update(edge.UpdateOperation.create_field_index(name, edge.PayloadSchemaType.Keyword))
    shard.update(edge.UpdateOperation.upsert_points(points(count)))
    shard.close()


def everything(shard: object) -> dict[str, tuple[list[float], dict]]:
    found, offset = {}, None
    while True:
        page, offset = shard.scroll(  # type: ignore[attr-defined]
            edge.ScrollRequest(offset=offset, limit=500, with_payload=True, with_vector=True)
        )
        found.update({str(p.id): (p.vector[VECTOR], p.payload) for p in page})
        if offset is None:
            return found


def indexes(shard: object) -> set[str]:
    return set(shard.info().payload_schema)  # type: ignore[attr-defined]


def test_a_new_shard_keeps_no_log_and_indexes_what_the_reader_filters(tmp_path):
    shard = open_shard(tmp_path / "memories", DIMS)
    shard.update(edge.UpdateOperation.upsert_points(points(3)))
    shard.flush()
    shard.close()
    assert not mem0_door.edge_has_wal(tmp_path / "memories")
    again = open_shard(tmp_path / "memories", DIMS)
    assert len(everything(again)) == 3
    assert indexes(again) == {*KEYWORDS, "confidence"}
    again.close()


def test_an_older_shard_is_migrated_whole_when_opened(tmp_path):
    path = tmp_path / "memories"
    old_shard(path, 1500)  # more than a page of the copy
    before = everything(edge.EdgeShard.load(str(path)))
    with capture_logs() as logs:
        shard = open_shard(path, DIMS)
    assert everything(shard) == before
    assert indexes(shard) == {*KEYWORDS, "confidence"}
    shard.close()
    assert not mem0_door.edge_has_wal(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memories"]
    assert [e["points"] for e in logs if e["event"] == "store.migrated"] == [1500]


def test_a_migration_stopped_while_copying_starts_again(tmp_path):
    path = tmp_path / "memories"
    old_shard(path, 5)
    partial = tmp_path / "memories.new"
    partial.mkdir()
    (partial / "half-written").write_text("a copy a stop cut short")
    shard = open_shard(path, DIMS)
    assert len(everything(shard)) == 5
    shard.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memories"]


def test_a_migration_stopped_between_its_renames_is_finished(tmp_path):
    path = tmp_path / "memories"
    old_shard(path, 5)
    # The whole copy was made and the old shard moved aside; the new one never moved in.
    open_shard(tmp_path / "copy", DIMS).close()
    copy = edge.EdgeShard.load(str(tmp_path / "copy"))
    copy.update(edge.UpdateOperation.upsert_points(points(5)))
    copy.flush()
    copy.close()
    path.rename(tmp_path / "memories.old")
    (tmp_path / "copy").rename(tmp_path / "memories.new")
    shard = open_shard(path, DIMS)
    assert len(everything(shard)) == 5
    shard.close()
    assert not mem0_door.edge_has_wal(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memories"]


def test_a_shard_is_held_by_one_opener_at_a_time(tmp_path):
    from executive.memory.store.shard import ShardInUse, lock

    held = lock(tmp_path / "memories")
    with pytest.raises(ShardInUse, match="held by another process"):
        lock(tmp_path / "memories")
    os.close(held)
    os.close(lock(tmp_path / "memories"))  # free again once the holder closes it
