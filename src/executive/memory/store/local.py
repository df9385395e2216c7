"""The embedded store: mem0's open-source ``Memory`` on Qdrant Edge, with no network and no key.

Vectors in a Qdrant Edge shard under ``<home>/.state/store/edge`` (or a Qdrant server by URL),
the embedder of ``embedder.py``, writes with ``infer=False``; how mem0 is wired to them is in
``mem0_memory.py``, how it is imported safely in ``mem0_door.prepare``. ``app_id`` lives in
metadata (OSS has no such field); every call runs on one dedicated thread, so writes never
race. A store built with another embedder refuses every call but ``wipe`` (what ``executive
mem rebuild`` does first) with a message that says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from executive.logs import get_logger
from executive.memory.store import mem0_door, mem0_memory
from executive.memory.store.base import Filter, MemoryRecord, NewMemory, StoreError, WriteReceipt
from executive.memory.store.edge import EdgeVectors, compile_where
from executive.memory.store.embedder import DEFAULT_EMBEDDER, EMBEDDERS, Embedder, EmbedderSpec
from executive.memory.store.records import compile_filter, record_from_item, record_from_payload
from executive.memory.store.wordindex import WordIndex

if TYPE_CHECKING:
    from executive.memory.read.scope_index import ScopedIndex

log = get_logger(__name__)

T = TypeVar("T")


class LocalStore:
    name = "local"

    def __init__(
        self,
        executor: ThreadPoolExecutor,
        where: str,
        data_dir: Path,
        spec: EmbedderSpec,
        build: Callable[[], Any],
        refusal: str | None,
        memory: Any,
        vectors: Any,
        embedder: Any,
    ) -> None:
        # mem0's Memory is built on first need (writes, history): reads run on the vectors
        # and the embedder alone, so `executive mem list` never imports mem0.
        self.__memory = memory
        self._build = build
        self._vectors = vectors
        # Our Qdrant Edge vectors (records, counts and durability of their own), or mem0's
        # provider for a Qdrant server (reached through the door).
        self._edge = isinstance(vectors, EdgeVectors)
        self._embedder = embedder
        self._executor = executor
        self._where = where
        self._closed = False
        self._data_dir = data_dir
        self._spec = spec
        # Set when the store was built with another embedder: every call but wipe refuses.
        self._refusal = refusal
        # Bumped by every write (they all pass through here): the reader's cache key.
        self._revision = 0
        # content key -> ids, so a write's duplicate check is a lookup, not a scan.
        # (a tuple: most keys name one memory, and a set apiece was ~2 MB at 10,000)
        self._keys: dict[str, tuple[str, ...]] | None = None
        # Every memory's words (the reader's BM25): built on first use, then kept by _wrote.
        self._words: WordIndex | None = None

    @classmethod
    async def open(
        cls,
        data_dir: Path,
        mem0_dir: Path,
        *,
        qdrant_url: str | None = None,
        qdrant_api_key: str | None = None,
        embedder: str = DEFAULT_EMBEDDER,
        models_dir: Path | None = None,
    ) -> LocalStore:
        spec = EMBEDDERS[embedder]
        await anyio.to_thread.run_sync(mem0_door.prepare, mem0_dir)
        await anyio.Path(data_dir).mkdir(parents=True, exist_ok=True)
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-store")
        where = qdrant_url or str(data_dir)
        vectors = "qdrant-server" if qdrant_url else "qdrant-edge"
        refusal = mem0_memory.embedder_problem(data_dir, spec, vectors)

        def build() -> Any:
            return mem0_memory.build_memory(data_dir, spec, models_dir, qdrant_url, qdrant_api_key)

        def parts() -> tuple[Any, Any, Any]:
            if qdrant_url:  # a server: mem0's own Qdrant provider, built now
                memory = build()
                return memory, mem0_door.vectors_of(memory), mem0_door.embedder_of(memory)
            shard = EdgeVectors(mem0_memory.COLLECTION, str(data_dir / "edge"), spec.dims)
            return None, shard, Embedder(spec, models_dir)

        try:
            memory, shard, embedding = await asyncio.wrap_future(executor.submit(parts))
            store = cls(executor, where, data_dir, spec, build, refusal, memory, shard, embedding)
            if refusal is None and mem0_memory.recorded(data_dir) is None:
                mem0_memory.record(data_dir, spec, vectors)
        except Exception as exc:
            executor.shutdown(wait=False)
            raise StoreError(f"cannot open the embedded store at {where}: {exc}") from exc
        if refusal:
            log.error("store.embedder_mismatch", where=where, error=refusal)
        log.info("store.opened", backend="local", where=where, embedder=spec.name)
        return store

    @property
    def _memory(self) -> Any:
        if self.__memory is None:
            memory = self._build()
            mem0_door.use_embedder(memory, self._embedder)  # one question cache for all
            self.__memory = memory
        return self.__memory

    async def _call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self._closed:
            raise StoreError(f"{what}: the store is closed")
        if self._refusal and what not in ("wipe", "close"):
            raise StoreError(f"{what}: {self._refusal}")
        try:
            return await asyncio.wrap_future(self._executor.submit(fn, *args, **kwargs))
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"{what} failed on the embedded store: {exc!r}") from exc

    # --- reads ------------------------------------------------------------------------------
    async def search(self, query: str, where: Filter, top_k: int) -> list[MemoryRecord]:
        return (await self.search_scopes(query, [where], top_k))[0]

    async def search_scopes(
        self, query: str, wheres: Sequence[Filter], top_k: int
    ) -> list[list[MemoryRecord]]:
        """One question, several filters, one trip to the store thread, one embedding."""
        compiled = [compile_filter(where) for where in wheres]

        def run() -> list[list[MemoryRecord]]:
            store = self._vectors
            if not self._edge:  # a Qdrant server: through mem0's search
                return [
                    [
                        record_from_item(item)
                        for item in self._memory.search(
                            query, top_k=top_k, filters=filters, threshold=0.0
                        ).get("results", [])
                    ]
                    for filters in compiled
                ]
            # Qdrant Edge: what mem0's search does for us, minus its work we do not use
            # (a 4x over-fetch for BM25 and entity boosts, both off): the same hits and
            # cosine scores, negative scores dropped as mem0's threshold 0.0 does. The
            # records come from the shard's cache, each copied with its score.
            vector = self._embedder.embed(query, "search")
            return [
                [
                    record.with_score(None if score is None else float(score))
                    for record, score in store.search_records(vector, top_k, compile_where(where))
                    if record.text and (score or 0.0) >= 0.0
                ]
                for where in wheres
            ]

        return await self._call("search", run)

    async def prepare(self, queries: Sequence[str]) -> None:
        if queries:
            await self._call("prepare", self._embedder.prime, list(queries))

    async def get(self, memory_id: str) -> MemoryRecord | None:
        return await self._call("get", self._get, memory_id)

    def _get(self, memory_id: str) -> MemoryRecord | None:
        if self._edge:  # no mem0 needed
            row = self._vectors.get(memory_id)
            return record_from_payload(row.id, row.payload) if row else None
        item = self._memory.get(memory_id)
        return record_from_item(item) if item else None

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        return await self._call(
            "history", lambda: [dict(r) for r in self._memory.history(memory_id)]
        )

    async def list(self, where: Filter | None = None) -> list[MemoryRecord]:
        """Every matching memory: Qdrant scroll, page by page, with no cap."""
        if where is not None and where.key is not None:
            return await self._by_key(where)

        def run() -> list[MemoryRecord]:
            return sorted(self._scroll(where), key=lambda r: (r.created_at or "", r.id))

        return await self._call("list", run)

    async def revision(self) -> int | None:
        # Every write passes through this adapter and bumps it (see _wrote).
        return self._revision

    async def words(
        self, wheres: Sequence[Filter], floor: float, now: datetime
    ) -> ScopedIndex | None:
        def run() -> ScopedIndex | None:
            if self._words is None:
                self._words = WordIndex(self._scroll(None))
            return self._words.view(wheres, floor, now)

        return await self._call("words", run)

    async def _by_key(self, where: Filter) -> list[MemoryRecord]:
        def run() -> list[MemoryRecord]:
            if self._keys is None:
                self._keys = {}
                for record in self._scroll(None):
                    if record.key:
                        self._key(record.key, record.id)
            records = (self._get(i) for i in sorted(self._keys.get(where.key or "", ())))
            return [r for r in records if r is not None and where.matches(r)]

        return await self._call("list", run)

    def _scroll(self, where: Filter | None) -> list[MemoryRecord]:
        if self._edge:  # records from its cache
            return self._vectors.scroll_records(compile_where(where))
        points = mem0_door.qdrant_points(self._vectors, compile_filter(where))  # a Qdrant server
        return [record_from_payload(p.id, p.payload or {}) for p in points]

    def _wrote(
        self,
        added: Sequence[tuple[str, str | None]] = (),
        removed: Sequence[str] = (),
        changed: Sequence[str] = (),
    ) -> None:
        """Every write passes here: the revision moves, the key and word indexes follow
        (``added`` and ``changed`` memories are read back as stored)."""
        self._flush()
        self._revision += 1
        if self._words is not None:
            for memory_id in removed:
                self._words.remove(memory_id)
            written = [(i, self._get(i)) for i in [*(i for i, _ in added), *changed]]
            for memory_id, record in written:
                if record is None:
                    self._words.remove(memory_id)
            self._words.put([record for _, record in written if record is not None])
        if self._keys is None:
            return
        for memory_id, key in added:
            if key:
                self._key(key, memory_id)
        for memory_id in removed:  # a memory has one key: the first match is the only one
            key = next((k for k, ids in self._keys.items() if memory_id in ids), None)
            if key is not None:
                self._keys[key] = tuple(i for i in self._keys[key] if i != memory_id)
                if not self._keys[key]:
                    del self._keys[key]

    def _key(self, key: str, memory_id: str) -> None:
        assert self._keys is not None
        ids = self._keys.get(key, ())
        if memory_id not in ids:
            self._keys[key] = (*ids, memory_id)

    def _flush(self) -> None:
        """Qdrant Edge: the shard keeps no log, so a write is durable once flushed. A Qdrant
        server's writes are its own to keep."""
        if self._edge:
            self._vectors.flush()

    async def count(self, where: Filter | None = None) -> int:
        return await self._call("count", self._count, where)

    def _count(self, where: Filter | None) -> int:
        if self._edge:
            return int(self._vectors.count(compile_where(where)))
        return mem0_door.qdrant_count(self._vectors, compile_filter(where))

    # --- writes (harvester and rebuild tools only) --------------------------------------------
    async def add(self, item: NewMemory) -> WriteReceipt:
        return (await self._call("add", self._create, [item.require_new()]))[0]

    async def add_many(self, items: list[NewMemory]) -> list[WriteReceipt]:
        return await self._call("add_many", self._create, items)

    def _create(self, items: list[NewMemory]) -> list[WriteReceipt]:
        """One batched embedding, then each item as ``mem0_door.create`` writes it (as
        ``Memory.add(infer=False)`` would; a test holds them alike); _wrote flushes the shard."""
        vectors = self._embedder.embed_batch([item.text for item in items], "add")
        receipts, added = [], []
        try:
            for item, vector in zip(items, vectors, strict=True):
                memory_id = mem0_door.create(self._memory, item, vector)
                added.append((memory_id, item.metadata.get("key")))
                receipts.append(WriteReceipt("SUCCEEDED", memory_id=memory_id))
        finally:  # what was written is indexed, even when a later item failed
            self._wrote(added=added)
        return receipts

    async def update(
        self, memory_id: str, *, text: str | None = None, metadata: dict[str, Any] | None = None
    ) -> None:
        def run() -> None:
            self._memory.update(memory_id, text=text, metadata=metadata)
            self._wrote(changed=[memory_id])

        await self._call("update", run)

    async def delete(self, memory_id: str) -> None:
        def run() -> None:
            self._memory.delete(memory_id)
            self._wrote(removed=[memory_id])

        await self._call("delete", run)

    async def wipe(self, user_id: str | None = None) -> None:
        def run() -> None:
            mine = Filter(user_id=user_id)
            if user_id is not None and self._count(None) > self._count(mine):
                # A Qdrant server another installation writes to as well: ours, one by one
                # (and its vectors stay: another embedder's could not be searched with them).
                if self._refusal:
                    raise StoreError(
                        f"wipe: {self._refusal}; other installations' memories share it"
                    )
                for record in self._scroll(mine):
                    self._memory.delete(record.id)
                    self._wrote(removed=[record.id])
                return
            self._memory.reset()
            mem0_door.write_ahead(self._memory)  # reset() opened a new history database
            self._flush()
            self._revision += 1
            self._keys = None
            self._words = None
            # Empty now, so it holds this embedder's vectors from here on.
            vectors = "qdrant-edge" if self._edge else "qdrant-server"
            mem0_memory.record(self._data_dir, self._spec, vectors)
            self._refusal = None

        await self._call("wipe", run)
        log.warning(
            "store.wiped", backend="local", where=self._where, one_installation=user_id is not None
        )

    async def close(self) -> None:
        if self._closed:
            return

        def run() -> None:
            if self.__memory is not None:
                self.__memory.close()  # mem0's history database
            if self._edge:  # flush and release its lock
                self._vectors.close()
            else:  # a Qdrant server: its client's
                mem0_door.qdrant_close(self._vectors)

        try:
            await self._call("close", run)
        finally:
            self._closed = True
            self._executor.shutdown(wait=False)
            log.info("store.closed", backend="local", where=self._where)
