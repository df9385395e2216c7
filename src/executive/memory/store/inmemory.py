"""A store in memory, with a journal: the fake that makes tests fast without hiding the store.

``EXECUTIVE_STORE=inmemory``. It keeps the :class:`~executive.memory.store.base.Store`
contract of the embedded store (filters, listing order, history, revision, ids kept on a
rebuild) and its durability: a write is appended to ``<home>/.state/store/inmemory.jsonl``
and fsync-ed before it is confirmed, and opening the store replays the journal (a torn last
line, from a crash mid-append, is dropped: that write was never confirmed). Vectors come
from hashed words (:func:`embed`), so nothing loads a model and every search
gives the same answer on any machine. One process at a time holds it, like the embedded
store. For tests and trials: it is not built for many memories (every search scans).
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
import re
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import anyio
import numpy as np

from executive.dates import now_iso
from executive.logs import get_logger
from executive.memory.store.base import Filter, MemoryRecord, NewMemory, StoreError, WriteReceipt
from executive.memory.store.wordindex import WordIndex

if TYPE_CHECKING:
    from executive.memory.read.scope_index import ScopedIndex

log = get_logger(__name__)

JOURNAL = "inmemory.jsonl"
# The embedder: words (and word pairs) hashed into a fixed-size vector. No model, no start-up
# cost, the same vector on any machine; it matches on shared words, not on meaning.
EMBEDDER = "hashing-384/v1"
DIMS = 384
_WORD = re.compile(r"[a-z0-9]+")


def embed(text: str) -> np.ndarray:
    """A unit vector (or zeros for a text with no words)."""
    words = _WORD.findall(text.lower())
    vector = np.zeros(DIMS, dtype=np.float32)
    for feature in [*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))]:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        number = int.from_bytes(digest, "little")
        # The sign bit spreads collisions around zero instead of piling them up.
        vector[number % DIMS] += 1.0 if number >> 63 else -1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


class InMemoryStore:
    name = "inmemory"

    def __init__(self, journal: IO[str] | None, where: str) -> None:
        self._journal = journal
        self._where = where
        self._records: dict[str, MemoryRecord] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._history: dict[str, list[dict[str, Any]]] = {}
        self._revision = 0
        self._closed = False
        self._writing = anyio.Lock()  # one journal append at a time, in entry order
        self._words: WordIndex | None = None  # built on first use, then kept by _apply

    @classmethod
    async def open(cls, data_dir: Path | None = None) -> InMemoryStore:
        """A store journaled under ``data_dir``; with None, one that lives in this process."""
        if data_dir is None:
            return cls(None, "memory")
        return await anyio.to_thread.run_sync(cls._replay, data_dir)

    @classmethod
    def _replay(cls, data_dir: Path) -> InMemoryStore:
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / JOURNAL
        handle = path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise StoreError(f"the store at {path} is held by another process") from None
        store = cls(handle, str(path))
        handle.seek(0)
        good = 0  # bytes of whole entries: a write is confirmed only after its newline
        for number, line in enumerate(handle.read().splitlines(keepends=True), 1):
            try:
                entry = json.loads(line) if line.endswith("\n") else None
            except json.JSONDecodeError:
                entry = None
            if entry is None:
                # Torn by a crash mid-append: cut it, so the next append starts a clean line.
                log.warning("store.journal_torn", where=str(path), line=number)
                handle.truncate(good)
                break
            store._apply(entry)
            good += len(line.encode("utf-8"))
        log.info("store.opened", backend="inmemory", where=str(path), embedder=EMBEDDER)
        return store

    # --- the journal: every write is one entry, applied the same way live and on replay ----
    async def _write(self, entry: dict[str, Any]) -> None:
        async with self._writing:
            if self._closed:
                raise StoreError(f"{entry['op']}: the store is closed")
            if self._journal is not None:
                await anyio.to_thread.run_sync(self._append, self._journal, entry)
            self._apply(entry)

    @staticmethod
    def _append(journal: IO[str], entry: dict[str, Any]) -> None:
        journal.write(json.dumps(entry, ensure_ascii=False) + "\n")
        journal.flush()
        os.fsync(journal.fileno())

    def _apply(self, entry: dict[str, Any]) -> None:
        op = entry["op"]
        if op in ("add", "update"):
            record = MemoryRecord.model_validate(entry["record"])
            self._records[record.id] = record
            self._vectors[record.id] = embed(record.text)
            before = self._history.get(record.id, []) if op == "update" else []
            self._history[record.id] = [*before, *entry.get("history", [entry.get("row")])]
            if self._words is not None:
                self._words.put([record])
        elif op == "delete":
            self._records.pop(entry["id"], None)
            self._vectors.pop(entry["id"], None)
            self._history.setdefault(entry["id"], []).append(entry["row"])
            if self._words is not None:
                self._words.remove(entry["id"])
        elif op == "wipe":  # one installation's memories, or (no user id) every memory
            user = entry.get("user_id")
            if user is None:
                self._history.clear()  # deleted memories' history too
            gone = [i for i, r in self._records.items() if user is None or r.user_id == user]
            for memory_id in gone:
                del self._records[memory_id], self._vectors[memory_id]
                self._history.pop(memory_id, None)
            self._words = None
        self._revision += 1

    @staticmethod
    def _row(memory_id: str, old: str | None, new: str | None, event: str, **at: Any) -> dict:
        # The shape of mem0's history rows, so every store's history reads alike.
        return {
            "id": str(uuid.uuid4()),
            "memory_id": memory_id,
            "old_memory": old,
            "new_memory": new,
            "event": event,
            "created_at": at.get("created_at"),
            "updated_at": at.get("updated_at"),
            "is_deleted": event == "DELETE",
            "actor_id": None,
            "role": "user",
        }

    # --- reads -----------------------------------------------------------------------------
    def _check(self, what: str) -> None:
        if self._closed:
            raise StoreError(f"{what}: the store is closed")

    async def search(self, query: str, where: Filter, top_k: int) -> list[MemoryRecord]:
        self._check("search")
        vector = embed(query)
        scored = [
            (float(np.dot(vector, self._vectors[r.id])), r.id, r)
            for r in self._records.values()
            if where.matches(r)
        ]
        # Ties broken by id, so equal scores come back in one order everywhere.
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [r.with_score(score) for score, _, r in scored[:top_k] if score >= 0.0]

    async def get(self, memory_id: str) -> MemoryRecord | None:
        self._check("get")
        return self._records.get(memory_id)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        self._check("history")
        return [dict(row) for row in self._history.get(memory_id, [])]

    async def list(self, where: Filter | None = None) -> list[MemoryRecord]:
        self._check("list")
        found = [r for r in self._records.values() if where is None or where.matches(r)]
        found.sort(key=lambda r: (r.created_at or "", r.id))
        return found

    async def count(self, where: Filter | None = None) -> int:
        return len(await self.list(where))

    async def revision(self) -> int | None:
        return self._revision

    async def words(
        self, wheres: Sequence[Filter], floor: float, now: datetime
    ) -> ScopedIndex | None:
        self._check("words")
        if self._words is None:
            self._words = WordIndex(self._records.values())
        return self._words.view(wheres, floor, now)

    # --- writes ----------------------------------------------------------------------------
    async def add(self, item: NewMemory) -> WriteReceipt:
        return (await self.add_many([item.require_new()]))[0]

    async def add_many(self, items: list[NewMemory]) -> list[WriteReceipt]:
        receipts = []
        for item in items:
            memory_id = item.memory_id or str(uuid.uuid4())
            created = item.created_at or now_iso()
            events = list(item.history) or [{"event": "ADD", "old": None, "new": item.text}]
            updated = next(
                (e["at"] for e in reversed(events) if e.get("event") == "UPDATE" and e.get("at")),
                created,
            )
            meta = {k: v for k, v in item.metadata.items() if k != "created_at"}
            record = MemoryRecord(
                id=memory_id,
                text=item.text,
                user_id=item.scope.get("user_id"),
                agent_id=item.scope.get("agent_id"),
                run_id=item.scope.get("run_id"),
                app_id=meta.get("app_id"),
                metadata=meta,
                created_at=created,
                updated_at=updated,
            )
            history = [
                self._row(
                    memory_id,
                    e.get("old"),
                    e.get("new"),
                    str(e.get("event", "ADD")),
                    created_at=created,
                    updated_at=e.get("at") or created,
                )
                for e in events
            ]
            await self._write({"op": "add", "record": record.model_dump(), "history": history})
            receipts.append(WriteReceipt("SUCCEEDED", memory_id=memory_id))
        return receipts

    async def update(
        self, memory_id: str, *, text: str | None = None, metadata: dict[str, Any] | None = None
    ) -> None:
        current = self._records.get(memory_id)
        if current is None:
            raise StoreError(f"update failed on the in-memory store: no memory {memory_id}")
        new_text = current.text if text is None else text
        meta = {**current.metadata, **(metadata or {})}
        at = now_iso()
        record = current.model_copy(
            update={
                "text": new_text,
                "metadata": meta,
                "app_id": meta.get("app_id"),
                "updated_at": at,
            }
        )
        row = self._row(
            memory_id,
            current.text,
            new_text,
            "UPDATE",
            created_at=current.created_at,
            updated_at=at,
        )
        await self._write({"op": "update", "record": record.model_dump(), "row": row})

    async def delete(self, memory_id: str) -> None:
        current = self._records.get(memory_id)
        if current is None:
            raise StoreError(f"delete failed on the in-memory store: no memory {memory_id}")
        row = self._row(memory_id, current.text, None, "DELETE", created_at=current.created_at)
        row["updated_at"] = now_iso()
        await self._write({"op": "delete", "id": memory_id, "row": row})

    async def wipe(self, user_id: str | None = None) -> None:
        await self._write({"op": "wipe", "user_id": user_id})
        if self._journal is not None and (user_id is None or not self._records):
            # Nothing before a wipe matters: start the journal over rather than grow it.
            journal = self._journal
            async with self._writing:
                await anyio.to_thread.run_sync(lambda: (journal.truncate(0), journal.flush()))
        log.warning(
            "store.wiped",
            backend="inmemory",
            where=self._where,
            one_installation=user_id is not None,
        )

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._journal is not None:
            self._journal.close()  # releases the lock
        log.info("store.closed", backend="inmemory", where=self._where)
