"""The one door to mem0 (and Qdrant through it): every reach past their public API, and why.

mem0 is pinned (``mem0ai==2.2.1``, with its ``qdrant-client``). Each function here says what
of that version it relies on and why the public API does not serve;
``tests/memory/store/test_mem0_door.py`` fails when an upgrade moves or changes it. No other
module of the store names a private part of mem0 or Qdrant, writes mem0's module state or
touches a part of a live ``Memory``. Importing this module imports neither mem0 nor
qdrant-client (seconds): each function imports what it reaches.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import types
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from executive.logs import get_logger
from executive.memory.store.base import NewMemory, StoreError

log = get_logger(__name__)

# Our providers, as mem0's factories know them (register_providers).
ONNX_EMBEDDER = "executive_onnx"
EDGE_VECTORS = "executive_edge"
NO_LLM = "executive_none"
_QDRANT_CONFIG = "mem0.configs.vector_stores.qdrant"
_QDRANT_PAGE = 1000


# --- importing mem0 ---------------------------------------------------------------------------
def prepare(mem0_dir: Path | None) -> None:
    """What must be true before ``import mem0``: telemetry off, its folder confined, no hub.

    mem0 2.2.1 reads ``MEM0_TELEMETRY`` once, at import, into
    ``mem0.memory.telemetry.MEM0_TELEMETRY`` (on by default: PostHog and a second Qdrant store)
    and writes ``$MEM0_DIR/config.json`` (``~/.mem0`` otherwise). Set later, the variable changes
    nothing and mem0 has no API to ask, so a mem0 imported with telemetry on is refused by
    reading that module variable. Every store calls this before its first mem0 import.
    """
    telemetry = sys.modules.get("mem0.memory.telemetry")
    if telemetry is not None and getattr(telemetry, "MEM0_TELEMETRY", False):
        raise StoreError("mem0 was imported with telemetry on; set MEM0_TELEMETRY=False first")
    os.environ["MEM0_TELEMETRY"] = "False"
    if mem0_dir is not None and "mem0" not in sys.modules:
        mem0_dir.mkdir(parents=True, exist_ok=True)
        os.environ["MEM0_DIR"] = str(mem0_dir)
    # The embedded model is a local folder: the hub is never needed, and never asked.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # We run semantic-only on purpose (BM25 needs a hub download, spaCy a model package);
    # mem0 warns about both on every start, which says nothing an operator can act on.
    for name in ("mem0.utils.spacy_models", "mem0.vector_stores.qdrant"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # pgvector logs a traceback for every failed statement, a unique-key refusal included
    # (an expected event when executives share a store); the adapter reports every failure.
    logging.getLogger("mem0.vector_stores.pgvector").setLevel(logging.CRITICAL)


def import_mem0() -> None:
    """``import mem0`` without importing ``qdrant_client`` for a default nobody uses.

    mem0 2.2.1 declares ``Memory.__init__(self, config=MemoryConfig())``: the default builds a
    Qdrant config at import, which imports ``qdrant_client`` (0.8 of the 1.3 s ``import mem0``
    takes here). Our stores pass their own config, so a stand-in for
    ``mem0.configs.vector_stores.qdrant`` serves while mem0 imports and leaves ``sys.modules``
    before this returns (a Qdrant server's config later imports the real one); mem0 has no
    lazy import. Call it after :func:`prepare`.

    Likewise PostHog: ``mem0.memory.telemetry`` imports ``Posthog`` at import time and makes
    one only with telemetry on, which :func:`prepare` turned off; a stand-in that refuses to be
    made serves instead (~3 MB of the daemon's memory, and no telemetry library in the process).
    """
    if "mem0" in sys.modules:
        return
    from pydantic import BaseModel, ConfigDict

    class QdrantConfig(BaseModel):
        """What ``VectorStoreConfig`` makes for the unused default argument: any fields."""

        model_config = ConfigDict(extra="allow")
        path: str | None = None  # the validator looks for ``path`` in the annotations

    class Posthog:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise StoreError("mem0 asked for telemetry, which this process keeps off")

    stand_in = types.ModuleType(_QDRANT_CONFIG)
    stand_in.QdrantConfig = QdrantConfig  # type: ignore[attr-defined]
    no_telemetry = types.ModuleType("posthog")
    no_telemetry.Posthog = Posthog  # type: ignore[attr-defined]
    stand_ins = {_QDRANT_CONFIG: stand_in}
    if os.environ.get("MEM0_TELEMETRY") == "False" and "posthog" not in sys.modules:
        stand_ins["posthog"] = no_telemetry
    sys.modules.update(stand_ins)
    try:
        import mem0  # noqa: F401
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
        parent = sys.modules.get("mem0.configs.vector_stores")
        if parent is not None and getattr(parent, "qdrant", None) is stand_in:
            delattr(parent, "qdrant")


# --- building Memory --------------------------------------------------------------------------
def register_providers() -> None:
    """Our embedder, our Qdrant Edge vectors and our no-op LLM in mem0's factory tables.

    mem0 2.2.1 offers ``LlmFactory.register_provider`` but no registry for embedders or vector
    stores: ``EmbedderFactory.provider_to_class`` and ``VectorStoreFactory.provider_to_class``
    (process-wide class attributes) map a provider name to a dotted path ``create`` loads and
    calls. The Edge entry is a function, so mem0 gets the shard the store already opened
    (``edge.shared``). Idempotent.
    """
    from mem0.utils.factory import EmbedderFactory, LlmFactory, VectorStoreFactory

    LlmFactory.register_provider(NO_LLM, "executive.memory.store.mem0_onnx.NoLlm")
    EmbedderFactory.provider_to_class[ONNX_EMBEDDER] = (
        "executive.memory.store.mem0_onnx.OnnxEmbedding"
    )
    VectorStoreFactory.provider_to_class[EDGE_VECTORS] = "executive.memory.store.edge.shared"


def edge_vector_store(config: Any) -> Any:
    """A ``VectorStoreConfig`` naming our Qdrant Edge provider, not validated.

    mem0 2.2.1's ``VectorStoreConfig`` validator checks the provider against a hard-coded table
    (``_provider_configs``), re-runs on instances and so refuses ours; pydantic's
    ``model_construct`` skips it. ``config`` holds what mem0 reads (``collection_name``) and
    ``edge.shared`` takes.
    """
    from mem0.vector_stores.configs import VectorStoreConfig

    return VectorStoreConfig.model_construct(provider=EDGE_VECTORS, config=config)


def new_memory(vector_store: Any, embedder: dict[str, Any], history_db_path: str) -> Any:
    """mem0's ``Memory`` on ``vector_store``, our embedder and no LLM, its history WAL.

    Every field of mem0 2.2.1's ``MemoryConfig`` is given and none validated
    (``model_construct``): a default would be a Qdrant config, importing qdrant_client (0.8 s)
    for nothing; validation would refuse the providers :func:`register_providers` adds (mem0
    checks fixed lists). ``embedder`` is the config mem0 hands our ``OnnxEmbedding``.
    """
    import_mem0()
    from mem0 import Memory
    from mem0.configs.base import MemoryConfig
    from mem0.embeddings.configs import EmbedderConfig
    from mem0.llms.configs import LlmConfig

    register_providers()
    config = MemoryConfig.model_construct(
        vector_store=vector_store,
        # Never called (infer=False), but Memory() builds one: ours imports nothing.
        llm=LlmConfig.model_construct(provider=NO_LLM, config={}),
        embedder=EmbedderConfig.model_construct(provider=ONNX_EMBEDDER, config=embedder),
        history_db_path=history_db_path,
        version="v1.1",
        reranker=None,
        custom_instructions=None,
    )
    memory = Memory(config)
    write_ahead(memory)
    return memory


# --- parts of a live Memory -------------------------------------------------------------------
def vectors_of(memory: Any) -> Any:
    """The vector store ``memory`` writes to (mem0 2.2.1: ``Memory.vector_store``, no accessor),
    for what mem0 has no call for (a Qdrant server's listing and count)."""
    return memory.vector_store


def embedder_of(memory: Any) -> Any:
    """The embedder ``memory`` built (mem0 2.2.1: ``Memory.embedding_model``, no accessor): with
    a Qdrant server the store embeds its questions with the very instance mem0 writes with."""
    return memory.embedding_model


def use_embedder(memory: Any, embedder: Any) -> None:
    """``memory`` embeds with ``embedder``, the instance the store's reads use.

    mem0 2.2.1 builds its own (``Memory.embedding_model``) and cannot be handed one; one
    instance keeps one question cache for every path (a Qdrant server's searches run through
    mem0 and find what the store's ``prepare`` primed).
    """
    memory.embedding_model = embedder


def use_history(memory: Any, history: Any) -> None:
    """``memory`` keeps each memory's history in ``history`` instead of its SQLite file.

    mem0 2.2.1 always opens ``SQLiteManager(history_db_path)`` as ``Memory.db`` and calls
    ``add_history`` / ``get_history`` on it; it has no history provider. ``history`` has
    those methods (``pghistory.PgHistory``: one history shared by every executive).
    """
    memory.db = history


def write_ahead(memory: Any) -> None:
    """mem0's history SQLite in WAL mode with synchronous=NORMAL.

    SQLite's defaults pay an fsync per write (~14 ms on this class of disk). WAL keeps every
    committed write across SIGKILL and risks only the last transactions on a power loss, when
    the harvest ledger (fsync'd before a write is confirmed) is the truth and ``executive mem
    drift --fix`` restores the store. mem0 2.2.1 has no setting: ``Memory.db.connection`` is
    ``SQLiteManager``'s sqlite3 handle. A missing one is logged, never fatal.
    """
    connection = getattr(getattr(memory, "db", None), "connection", None)
    if connection is None:
        log.warning("store.wal_unavailable", database="history")
        return
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")


def trust_collection(memory: Any) -> None:
    """mem0's pgvector store under ``memory`` takes its table as there (``pgschema.migrate``).

    mem0 2.2.1's ``PGVector._ensure_collection`` runs before each call until it has seen the
    table once (``_collection_ensured``), and would create mem0's own table (without our indexes
    and unique key) if it looked elsewhere than the migration did; no option skips it.
    """
    vectors_of(memory)._collection_ensured = True


# --- writing as Memory.add(infer=False) does, with a batched embedding ------------------------
def payload(item: NewMemory) -> dict[str, Any]:
    """The payload ``Memory.add(infer=False)`` would store for ``item``.

    mem0 2.2.1's ``add`` builds it with ``mem0.memory.main._build_filters_and_metadata``
    (a module-private function); a batched add must store exactly the same.
    """
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
    """Store ``item`` with its precomputed vector: under its own id when it has one.

    mem0 2.2.1's ``Memory.add`` embeds one text at a time; ``Memory._create_memory``, the write
    it makes, takes the embedding, so a batch embeds once (several times faster on a CPU).
    """
    full = payload(item)
    if item.memory_id:
        return create_with_id(memory, item, vector, full)
    return str(memory._create_memory(item.text, {item.text: vector}, full))


def create_with_id(
    memory: Any, item: NewMemory, vector: list[float], metadata: dict[str, Any]
) -> str:
    """``Memory._create_memory`` under the id the memory had, with its history replayed.

    mem0 picks a new uuid on every create, so a rebuild would renumber every memory (and every
    id in a pack, a log line or a person's notes would point nowhere). The payload is built as
    mem0 2.2.1's ``_create_memory`` builds it (``data``, ``hash``, both dates,
    ``lemmatize_for_bm25``), through ``Memory.vector_store.insert`` and ``Memory.db.add_history``.
    """
    from mem0.utils.lemmatization import lemmatize_for_bm25

    assert item.memory_id is not None
    payload = {**metadata, "data": item.text, "hash": hashlib.md5(item.text.encode()).hexdigest()}
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


# --- Qdrant -----------------------------------------------------------------------------------
def qdrant_filter(filters: dict[str, Any]) -> Any:
    """mem0's Qdrant filter for a mem0 filter dict (None for none), with no Qdrant store.

    mem0 2.2.1 builds it in ``Qdrant._create_filter`` (every shape it emits: equality, in, ne,
    nin, ranges, AND/OR/NOT), which uses nothing of its store but its own helpers. The Edge
    shard and a Qdrant server's scroll and count need the very filter mem0 searches with; a
    Qdrant store would open a client, so the method runs on one made without ``__init__``.
    """
    if not filters:
        return None
    from mem0.vector_stores.qdrant import Qdrant

    return Qdrant.__new__(Qdrant)._create_filter(filters)


def _qdrant_client(store: Any) -> Any:
    """The ``QdrantClient`` mem0 2.2.1's Qdrant store holds (``store.client``; no accessor)."""
    return store.client


def qdrant_points(store: Any, filters: dict[str, Any]) -> list[Any]:
    """Every point of a Qdrant server's store that matches ``filters``, with its payload.

    mem0 2.2.1's ``Qdrant.list`` reads one page with no offset: this pages through its client's
    ``scroll``, with the filter mem0 searches with.
    """
    client, where = _qdrant_client(store), qdrant_filter(filters)
    points: list[Any] = []
    offset = None
    while True:
        page, offset = client.scroll(
            collection_name=store.collection_name,
            scroll_filter=where,
            limit=_QDRANT_PAGE,
            offset=offset,
            with_payload=True,
            with_vectors=False,
        )
        points += page
        if offset is None:
            return points


def qdrant_count(store: Any, filters: dict[str, Any]) -> int:
    """How many points of a Qdrant server's store match ``filters`` (mem0 has no count)."""
    counted = _qdrant_client(store).count(
        collection_name=store.collection_name, count_filter=qdrant_filter(filters), exact=True
    )
    return int(counted.count)


def qdrant_close(store: Any) -> None:
    """Close the client of a Qdrant server's store: mem0 2.2.1 never does, and without it
    ``QdrantClient.__del__`` prints a traceback at interpreter exit."""
    _qdrant_client(store).close()


def edge_has_wal(path: Path) -> bool:
    """Whether the Qdrant Edge shard at ``path`` keeps a write-ahead log: qdrant-edge-py 0.9.0
    reports no such thing (``EdgeShard.info`` names segments, points and indexes), but a shard
    made with its log on holds it in a ``wal`` folder, and one made without has none."""
    return (path / "wal").is_dir()
