"""The Postgres store: mem0's pgvector provider with our ONNX embedder, shared by executives.

Selected by ``EXECUTIVE_STORE=postgres`` and ``EXECUTIVE_STORE_URL`` (a libpq URL; a secret:
only :func:`redacted` forms of it are ever logged). The facts and traps it handles are
measured in ``postgres-store.md``:

- one pool of ours (``pgpool``), handed to mem0; every connection sets
  ``hnsw.iterative_scan=relaxed_order`` (without it a filtered HNSW search returns a few rows
  of the sixty asked) and prepares no statements (each query gets a custom plan, which can
  use the B-tree indexes for a rare filter);
- the schema is made by ``pgschema.migrate`` on the first call, not at open (the daemon
  starts, and writes go pending, while the database is down);
- reads are our SQL on the same table: listing is ordered and paged in SQL (mem0's
  ``get_all`` is neither), search is semantic only (mem0 turns hybrid keyword scoring on for
  pgvector, in ``Memory.search``, which is never called);
- writes go through mem0 (``infer=False``); the unique ``(user_id, key)`` index turns a
  second write of the same lesson into ``DUPLICATE``, naming the stored memory;
- wipe deletes one installation's rows (others share the table) or, for all, truncates
  (``pgschema.truncate``), then re-applies the schema; the store refuses another embedder
  than the one its vectors came from.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from executive.logs import get_logger
from executive.memory.store import mem0_door, mem0_memory, pgreads, pgschema
from executive.memory.store.base import (
    Filter,
    MemoryRecord,
    NewMemory,
    StoreError,
    StoreUnavailable,
    WriteReceipt,
)
from executive.memory.store.embedder import DEFAULT_EMBEDDER, EMBEDDERS, Embedder, EmbedderSpec
from executive.memory.store.pgcache import Held
from executive.memory.store.pghistory import PgHistory
from executive.memory.store.pgpool import make_pool, redacted, vector_text, why_unreachable
from executive.memory.store.pgschema import compile_sql
from executive.memory.store.pgwords import PgWords
from executive.memory.store.records import record_from_payload

if TYPE_CHECKING:
    from executive.memory.read.scope_index import ScopedIndex

log = get_logger(__name__)

# Calls that change nothing: safe to ask again.
_READS = frozenset({"search", "prepare", "words", "get", "history", "list", "count", "revision"})

T = TypeVar("T")
DUPLICATE = "DUPLICATE"
_HOLDER = sql.SQL(
    "SELECT id FROM {} WHERE payload->>'user_id' = %s AND payload->>'key' = %s"
).format(pgschema.TABLE_ID)


class PostgresStore:
    name = "postgres"

    def __init__(
        self,
        pool: ConnectionPool,
        where: str,
        spec: EmbedderSpec,
        models_dir: Path | None,
        *,
        workers: int = 4,
    ) -> None:
        self._pool = pool
        self._where = where  # redacted
        self._spec = spec
        self._models_dir = models_dir
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pg-store")
        self._embedder = Embedder(spec, models_dir)
        self._history = PgHistory(pool)
        self._held = Held()  # small scopes' vectors and records, per store revision
        self._words = PgWords()  # every memory's words, app by app (pgwords.py)
        self._memory: Any = None
        self._ready = False
        self._refusal: str | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._down = False  # the last call found the server down (not only the pool empty)

    @classmethod
    async def open(
        cls,
        url: str,
        mem0_dir: Path,
        *,
        embedder: str = DEFAULT_EMBEDDER,
        models_dir: Path | None = None,
        timeout_seconds: float = 30.0,
        pool_size: int = 4,
    ) -> PostgresStore:
        spec = EMBEDDERS[embedder]
        await anyio.to_thread.run_sync(mem0_door.prepare, mem0_dir)
        where = redacted(url)
        try:
            pool = make_pool(url, size=pool_size, timeout=timeout_seconds)
            store = cls(pool, where, spec, models_dir, workers=pool_size)
        except Exception as exc:
            raise StoreError(f"cannot open the Postgres store at {where}: {exc}") from exc
        log.info("store.opened", backend="postgres", where=where, embedder=spec.name)
        return store

    # --- the first call: schema, embedder check ----------------------------------------------
    def _ensure(self) -> None:
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            with self._pool.connection() as conn:
                version = pgschema.migrate(conn, self._spec.dims)
                with conn.transaction():
                    found = pgschema.recorded_embedder(conn)
                    if found is None:
                        pgschema.record_embedder(conn, self._spec.name, self._spec.dims)
                    elif (found["name"], found["dims"]) != (self._spec.name, self._spec.dims):
                        self._refusal = (
                            f"the memory store at {self._where} was built with the embedder "
                            f"{found['name']} ({found['dims']} dimensions); this installation "
                            f"is configured for {self._spec.name} ({self._spec.dims} dimensions)"
                            ": run `executive mem rebuild` to re-embed every memory from the "
                            "harvest ledgers"
                        )
                        log.error("store.embedder_mismatch", where=self._where, error=self._refusal)
            self._ready = True
            log.info("store.schema_ready", backend="postgres", pgvector=version)

    def _mem0(self) -> Any:
        """mem0's ``Memory`` on our pool, built on the first write (reads never need it)."""
        with self._lock:
            if self._memory is None:
                memory = mem0_memory.build_memory(
                    Path(), self._spec, self._models_dir, pg_pool=self._pool
                )
                mem0_door.use_embedder(memory, self._embedder)
                mem0_door.use_history(memory, self._history)
                mem0_door.trust_collection(memory)  # the migration made its table
                self._memory = memory
            return self._memory

    async def _call(
        self, what: str, fn: Callable[..., T], *args: Any, ensure: bool = True, **kwargs: Any
    ) -> T:
        if self._closed:
            raise StoreError(f"{what}: the store is closed")

        def run() -> T:
            if ensure:
                self._ensure()
                if self._refusal and what not in ("wipe", "close"):
                    raise StoreError(f"{what}: {self._refusal}")
            return fn(*args, **kwargs)

        if self._down:
            # Found down before: a direct connection says whether it still is, at once,
            # rather than every caller (a probe, a scrape, a hook) waiting on the pool.
            cause = await anyio.to_thread.run_sync(why_unreachable, self._pool)
            if cause:
                raise StoreUnavailable(self._unavailable(what, cause))
            self._down = False
        for tries_left in (1, 0):
            try:
                return await asyncio.wrap_future(self._executor.submit(run))
            except StoreError:
                raise
            except PoolTimeout as exc:
                cause = await anyio.to_thread.run_sync(why_unreachable, self._pool)
                if cause:
                    self._down = True
                    raise StoreUnavailable(self._unavailable(what, cause)) from exc
                if tries_left and what in _READS:
                    # The server answers again and the pool's next attempt is seconds away
                    # (pgpool.make_pool): a read is asked once more, never a write.
                    log.info("store.pool_reconnecting", call=what, where=self._where)
                    continue
                raise StoreError(f"{what}: no free connection to {self._where}: {exc}") from exc
            except Exception as exc:
                raise StoreError(f"{what} failed on the Postgres store: {exc!r}") from exc
        raise AssertionError("unreachable: the last try returns or raises")

    def _unavailable(self, what: str, cause: str) -> str:
        return f"{what}: the Postgres server at {self._where} does not answer: {cause}"

    @contextmanager
    def _autocommit(self) -> Iterator[Any]:
        """A pooled connection for one-statement reads: no BEGIN, no COMMIT (three round trips
        of a read's four), handed back as the pool lends them."""
        with self._pool.connection() as conn:
            conn.autocommit = True
            try:
                yield conn
            finally:
                if not conn.closed:
                    conn.autocommit = False

    def _rows(self, query: sql.Composable, params: Sequence[Any]) -> list[Any]:
        with self._pool.connection() as conn:
            return conn.execute(query, params).fetchall()

    # --- reads ------------------------------------------------------------------------------
    async def search(self, query: str, where: Filter, top_k: int) -> list[MemoryRecord]:
        """A one-off search: the server's index, never a scope loaded for it."""
        return (await self._search(query, [where], top_k, hold=False))[0]

    async def search_scopes(
        self, query: str, wheres: Sequence[Filter], top_k: int
    ) -> list[list[MemoryRecord]]:
        """One question of the reader's (one embedding), several filters, one connection. The
        reader asks its scopes several questions, so a small scope is loaded and held."""
        return await self._search(query, wheres, top_k, hold=True)

    async def _search(
        self, query: str, wheres: Sequence[Filter], top_k: int, *, hold: bool
    ) -> list[list[MemoryRecord]]:
        def run() -> list[list[MemoryRecord]]:
            # Formatted once: the server reads this text, and what is held is searched with
            # the vector the server would read from it.
            text = vector_text(self._embedder.embed(query, "search"))
            if hold:  # most of a pack's searches: its scopes are held by then
                with self._autocommit() as conn:
                    found = pgreads.search_held(conn, self._held, text, wheres, top_k)
                if found is not None:
                    return found
            with self._pool.connection() as conn, conn.transaction():
                return pgreads.search(conn, self._held, text, wheres, top_k, hold=hold)

        return await self._call("search", run)

    async def prepare(self, queries: Sequence[str]) -> None:
        """Embed the questions the reader is about to ask, in one batch (no database)."""
        if queries:
            await self._call("prepare", self._embedder.prime, list(queries), ensure=False)

    async def words(
        self, wheres: Sequence[Filter], floor: float, now: datetime
    ) -> ScopedIndex | None:
        def run() -> ScopedIndex | None:
            with self._autocommit() as conn:
                return self._words.view(conn, wheres, floor, now)

        return await self._call("words", run)

    async def get(self, memory_id: str) -> MemoryRecord | None:
        try:
            key = uuid.UUID(memory_id)
        except ValueError:
            return None  # not an id of this store (every id is a UUID)

        def run() -> MemoryRecord | None:
            rows = self._rows(
                sql.SQL("SELECT id, payload FROM {} WHERE id = %s").format(pgschema.TABLE_ID), [key]
            )
            return record_from_payload(rows[0][0], rows[0][1]) if rows else None

        return await self._call("get", run)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        return await self._call("history", self._history.get_history, memory_id)

    async def list(self, where: Filter | None = None) -> list[MemoryRecord]:
        def run() -> list[MemoryRecord]:
            with self._pool.connection() as conn, conn.transaction():
                return pgreads.listing(conn, where)

        return await self._call("list", run)

    async def count(self, where: Filter | None = None) -> int:
        condition, params = compile_sql(where)

        def run() -> int:
            query = sql.SQL("SELECT count(*) FROM {} WHERE {}").format(pgschema.TABLE_ID, condition)
            return int(self._rows(query, params)[0][0])

        return await self._call("count", run)

    async def revision(self) -> int | None:
        """Bumped by a trigger in every writing transaction: right across processes."""

        def run() -> int:
            with self._autocommit() as conn:
                return pgschema.revision(conn)

        return await self._call("revision", run)

    # --- writes (harvester and rebuild tools only) --------------------------------------------
    def _duplicate(self, exc: psycopg.IntegrityError, item: NewMemory) -> WriteReceipt:
        """DUPLICATE naming the memory stored under the item's ``(user_id, key)``: the winner
        of a race. Not our unique key (or the holder was deleted since): a failure."""
        key = item.metadata.get("key")
        found = self._rows(_HOLDER, [item.scope["user_id"], key]) if isinstance(key, str) else []
        if not found:
            return WriteReceipt("FAILED", error=f"the database refused the write: {exc}")
        return WriteReceipt(DUPLICATE, memory_id=str(found[0][0]), detail={"stored_key": key})

    async def add(self, item: NewMemory) -> WriteReceipt:
        return (await self._call("add", self._create, [item.require_new()]))[0]

    async def add_many(self, items: list[NewMemory]) -> list[WriteReceipt]:
        return await self._call("add_many", self._create, items)

    def _create(self, items: list[NewMemory]) -> list[WriteReceipt]:
        """Each item created as ``Memory.add(infer=False)`` creates it, with one batched
        embedding pass; each insert is committed (durable) before it returns."""
        memory = self._mem0()
        vectors = self._embedder.embed_batch([item.text for item in items], "add")
        receipts = []
        for item, vector in zip(items, vectors, strict=True):
            try:
                memory_id = mem0_door.create(memory, item, vector)
            except psycopg.IntegrityError as exc:
                # Another executive wrote it meanwhile, or the id is taken.
                receipts.append(self._duplicate(exc, item))
                continue
            receipts.append(WriteReceipt("SUCCEEDED", memory_id=str(memory_id)))
        return receipts

    async def update(
        self, memory_id: str, *, text: str | None = None, metadata: dict[str, Any] | None = None
    ) -> None:
        await self._call(
            "update", lambda: self._mem0().update(memory_id, text=text, metadata=metadata)
        )

    async def delete(self, memory_id: str) -> None:
        await self._call("delete", lambda: self._mem0().delete(memory_id))

    async def wipe(self, user_id: str | None = None) -> None:
        deleted: int | None = None

        def run() -> None:
            nonlocal deleted
            with self._pool.connection() as conn:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (pgschema.LOCK_ID,))
                    others = 0 if user_id is None else pgschema.others_stored(conn, user_id)
                    if others and self._refusal:
                        # Their vectors came from the recorded embedder: it cannot change.
                        raise StoreError(
                            f"wipe: {self._refusal}; {others} memories of other installations "
                            "share this store, so it keeps the embedder they were made with"
                        )
                    if user_id is None:
                        pgschema.truncate(conn)
                    else:
                        deleted = pgschema.delete_user(conn, user_id)
                    if not others:
                        pgschema.record_embedder(conn, self._spec.name, self._spec.dims)
                # Re-applied: an index dropped by hand (or by mem0's reset) is back.
                pgschema.migrate(conn, self._spec.dims)
            if not others:
                self._refusal = None

        await self._call("wipe", run)
        log.warning(
            "store.wiped",
            backend="postgres",
            where=self._where,
            one_installation=user_id is not None,
            deleted=deleted,
        )

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await anyio.to_thread.run_sync(self._pool.close)
        finally:
            self._executor.shutdown(wait=False)
            log.info("store.closed", backend="postgres", where=self._where)
