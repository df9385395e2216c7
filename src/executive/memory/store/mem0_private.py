"""Every place we reach into mem0 2.2.1 (or Qdrant through it) past its public API, and why.

mem0 is pinned (``mem0ai==2.2.1``): each function here names the private part it uses, and
``tests/memory/store/test_mem0_private.py`` fails when the pinned version moves or renames it.

* :func:`payload` uses ``mem0.memory.main._build_filters_and_metadata``: a batched add must
  build the stored payload exactly as ``Memory.add(infer=False)`` does.
* :func:`create` uses ``Memory._create_memory``: the write ``add`` makes, with an embedding
  computed for the whole batch at once (several times faster on a CPU).
* :func:`create_with_id` writes a payload and its history rows itself (``vector_store.insert``,
  ``Memory.db.add_history``, ``lemmatize_for_bm25``): mem0 always picks a new id, and a
  rebuild must keep the ids people and packs refer to.
* :func:`write_ahead` sets pragmas on ``Memory.db.connection``, mem0's history SQLite.
* :func:`qdrant_filter` uses ``Qdrant._create_filter`` on a Qdrant server's store, to scroll and
  count with the same filter mem0 searches with.
* :func:`import_mem0` imports mem0 with a stand-in for ``mem0.configs.vector_stores.qdrant``:
  ``Memory.__init__(self, config=MemoryConfig())`` builds a Qdrant config as a default
  argument, at import time, and that imports ``qdrant_client`` (0.8 of the 1.3 s ``import
  mem0`` takes here). Our stores pass their own config, so that default is never used; the
  stand-in leaves ``sys.modules`` before the import returns, and a Qdrant server's config
  later imports the real module.
"""

from __future__ import annotations

import hashlib
import sys
import types
from datetime import UTC, datetime
from typing import Any

from executive.logs import get_logger
from executive.memory.store.base import NewMemory

log = get_logger(__name__)


def payload(item: NewMemory) -> dict[str, Any]:
    """The payload ``Memory.add(infer=False)`` would store for ``item``."""
    from mem0.memory.main import _build_filters_and_metadata

    meta = dict(item.metadata)
    if item.created_at:
        meta["created_at"] = item.created_at  # honoured by mem0 with infer=False
    full, _ = _build_filters_and_metadata(
        user_id=item.scope["user_id"],
        agent_id=item.scope["agent_id"],
        run_id=item.scope["run_id"],
        input_metadata=meta,
    )
    full["role"] = "user"
    return full


def create(memory: Any, item: NewMemory, vector: list[float]) -> str:
    """Store ``item`` with its precomputed vector: under its own id when it has one."""
    full = payload(item)
    if item.memory_id:
        return create_with_id(memory, item, vector, full)
    return str(memory._create_memory(item.text, {item.text: vector}, full))


def qdrant_filter(store: Any, filters: dict[str, Any]) -> Any:
    """mem0's Qdrant filter for ``filters`` (None for none), for a scroll or a count."""
    return store._create_filter(filters) if filters else None


def write_ahead(memory: Any) -> None:
    """mem0's history SQLite in WAL mode with synchronous=NORMAL.

    With SQLite's defaults every write pays an fsync (~14 ms on this class of disk). WAL keeps
    every committed write across a process kill (SIGKILL) and only risks the last transactions
    on a power loss, when the harvest ledger (fsync'd before a write is confirmed) is the
    truth and ``executive mem drift --fix`` restores the store. Private handle of a pinned
    version (mem0ai 2.2.1): a missing one is logged, never fatal.
    """
    connection = getattr(getattr(memory, "db", None), "connection", None)
    if connection is None:
        log.warning("store.wal_unavailable", database="history")
        return
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")


def create_with_id(
    memory: Any, item: NewMemory, vector: list[float], metadata: dict[str, Any]
) -> str:
    """``Memory._create_memory`` under the id the memory had, with its history replayed.

    mem0 picks a new uuid on every create, so a rebuild would renumber every memory (and
    every id in a pack, a log line or a person's notes would point nowhere). The payload is
    built exactly as mem0 builds it (2.2.1, main.py ``_create_memory``).
    """
    from mem0.utils.lemmatization import lemmatize_for_bm25

    assert item.memory_id is not None
    payload = dict(metadata)
    payload["data"] = item.text
    payload["hash"] = hashlib.md5(item.text.encode()).hexdigest()
    payload.setdefault("created_at", datetime.now(UTC).isoformat())
    events = list(item.history) or [{"event": "ADD", "old": None, "new": item.text}]
    payload["updated_at"] = next(
        (e["at"] for e in reversed(events) if e.get("event") == "UPDATE" and e.get("at")),
        payload["created_at"],
    )
    payload["text_lemmatized"] = lemmatize_for_bm25(item.text)
    memory.vector_store.insert(vectors=[vector], ids=[item.memory_id], payloads=[payload])
    for event in events:
        at = event.get("at") or payload["created_at"]
        memory.db.add_history(
            item.memory_id,
            event.get("old"),
            event.get("new"),
            str(event.get("event", "ADD")),
            created_at=payload["created_at"],
            updated_at=at,
            role="user",
        )
    return item.memory_id


_QDRANT_CONFIG = "mem0.configs.vector_stores.qdrant"


def import_mem0() -> None:
    """``import mem0`` without importing ``qdrant_client`` for a default nobody uses.

    Call it where mem0 is first imported (after ``mem0env.prepare``); a no-op once mem0 is in.
    """
    if "mem0" in sys.modules:
        return
    from pydantic import BaseModel, ConfigDict

    class QdrantConfig(BaseModel):
        """What ``VectorStoreConfig`` makes for the unused default argument: any fields."""

        model_config = ConfigDict(extra="allow")
        path: str | None = None  # the validator looks for ``path`` in the annotations

    stand_in = types.ModuleType(_QDRANT_CONFIG)
    stand_in.QdrantConfig = QdrantConfig  # type: ignore[attr-defined]
    sys.modules[_QDRANT_CONFIG] = stand_in
    try:
        import mem0  # noqa: F401
    finally:
        if sys.modules.get(_QDRANT_CONFIG) is stand_in:
            del sys.modules[_QDRANT_CONFIG]
        parent = sys.modules.get("mem0.configs.vector_stores")
        if parent is not None and getattr(parent, "qdrant", None) is stand_in:
            delattr(parent, "qdrant")
