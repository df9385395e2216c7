"""The embedded store's Qdrant Edge shard on disk: how one is made, and how an older one is
brought to today's layout.

Today's shard keeps what a daemon's resident memory pays for small (``bench/daemon.py
--memories 10000``):

- no write-ahead log: the store flushes the shard after each of its writes instead
  (``EdgeVectors.flush``, ~15 ms at 10,000 memories), so a write is on disk before the store
  says it succeeded, as it was with the log; but the log was read whole at every start and
  stayed mapped (24 MB at 10,000 memories);
- vectors ``Cold``: mapped from disk, resident as far as searches touch them, not loaded
  whole at open (a 32 MB chunk at 10,000);
- payload indexes only on the fields the reader filters by (user, agent, app, type, env,
  confidence): each keyword index maps ~5 MB even when empty. A key lookup has the store's
  own key map; the rarer filters (run, cohort, key, metadata) scan payloads;
- one search thread, not one per CPU: exact searches over one segment gain nothing from a
  pool, and each of its threads held memory of its own.

Without its log, Qdrant Edge no longer stops a second process opening the same folder; the
store's own lock (:func:`lock`) does, held for as long as the store is open.

A shard made before (with its log, loaded vectors and nine keyword indexes) is migrated when
opened: every point copied, with its vector and payload, into a new shard beside it, which
then takes its place. Each step leaves a state the next open finishes (:func:`_recover`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import qdrant_edge as edge

from executive.files import try_lock
from executive.logs import get_logger
from executive.memory.store import mem0_door

log = get_logger(__name__)

VECTOR = "dense"
KEYWORDS = ("user_id", "agent_id", "app_id", "type", "env")
_PAGE = 1000


def open_shard(path: Path, dims: int) -> Any:
    """The shard at ``path``: loaded (migrated first if it is older), or made empty."""
    _recover(path)
    if not (path.is_dir() and any(path.iterdir())):
        return create(path, dims)
    if mem0_door.edge_has_wal(path):
        _migrate(path, dims)
    return edge.EdgeShard.load(str(path))


class ShardInUse(RuntimeError):
    """Another process has the store open."""


def lock(path: Path) -> int:
    """An exclusive lock on the shard at ``path`` (a file beside it), for this process until
    the descriptor it returns is closed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = try_lock(_beside(path, "lock"))
    if fd is None:
        raise ShardInUse(f"the store at {path} is held by another process")
    return fd


def create(path: Path, dims: int) -> Any:
    """An empty shard in today's layout."""
    path.mkdir(parents=True, exist_ok=True)
    vectors = edge.EdgeVectorParams(
        size=dims, distance=edge.Distance.Cosine, memory=edge.Memory.Cold
    )
    config = edge.EdgeConfig(vectors={VECTOR: vectors}, wal_enabled=False, max_search_threads=1)
    shard = edge.EdgeShard.create(str(path), config)
    for name in KEYWORDS:
        shard.update(edge.UpdateOperation.create_field_index(name, edge.PayloadSchemaType.Keyword))
    shard.update(
        edge.UpdateOperation.create_field_index("confidence", edge.PayloadSchemaType.Float)
    )
    shard.flush()
    return shard


def _beside(path: Path, suffix: str) -> Path:
    return path.with_name(f"{path.name}.{suffix}")


def _recover(path: Path) -> None:
    """Finish or undo a migration a stop interrupted: the new shard is whole once the old one
    has been renamed away (the copy is flushed and closed before), and not before."""
    new, old = _beside(path, "new"), _beside(path, "old")
    if not path.exists() and new.is_dir() and old.is_dir():
        new.rename(path)
    shutil.rmtree(new, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)


def pages(
    shard: Any, where: Any = None, *, size: int = _PAGE, payload: bool = True, vector: bool = False
) -> Iterator[list[Any]]:
    """Every point of ``shard`` that ``where`` matches, a page of ``size`` at a time."""
    offset = None
    while True:
        points, offset = shard.scroll(
            edge.ScrollRequest(
                offset=offset, limit=size, filter=where, with_payload=payload, with_vector=vector
            )
        )
        if points:
            yield points
        if offset is None:
            return


def _migrate(path: Path, dims: int) -> None:
    old = edge.EdgeShard.load(str(path))
    new_path = _beside(path, "new")
    new = create(new_path, dims)
    copied = 0
    try:
        for points in pages(old, vector=True):
            copies = [edge.Point(p.id, p.vector, p.payload or {}) for p in points]
            new.update(edge.UpdateOperation.upsert_points(copies))
            copied += len(copies)
        new.flush()
    finally:
        new.close()
        old.close()
    path.rename(_beside(path, "old"))
    _recover(path)
    log.warning(
        "store.migrated",
        where=str(path),
        points=copied,
        why="the shard's log, loaded vectors and unused indexes cost resident memory",
    )
