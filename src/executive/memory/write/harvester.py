"""The harvester: the one writer. Stamp, validate all, deduplicate, ledger, write, confirm.

Nothing is sent until every payload of a batch passes ``classify``. Every attempt is in the
harvest ledger (``PENDING`` before the store is called, the result after) before the
caller hears back, so a write the store never confirmed is never lost: ``replay`` sends it
again, and the content key makes that a no-op when the first try did land.

Principles are written by one path: the constitution sync (backfill lane A), which passes
``principles=True``. Every other caller (``mem add``, the hooks, the LLM engine) is refused
a principle by field, and no payload chooses its content key, so none can name a principle's.
A skipped duplicate is ledgered as a skip naming the stored memory, never as a write of the
skipped payload: the ledger says what the store holds.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import anyio

from executive.logs import get_logger
from executive.memory.read.words import WORD, normal
from executive.memory.store.base import (
    Filter,
    MemoryRecord,
    NewMemory,
    Store,
    StoreError,
    WriteReceipt,
)
from executive.memory.taxonomy import MemoryType
from executive.memory.write import ledger as L
from executive.memory.write.classify import Rejected, change_rejections, validate_batch
from executive.memory.write.envelope import Defaults, Payload, stamp
from executive.memory.write.fields import Rejection
from executive.memory.write.writes import Gate, HarvestSummary, WriteResult

log = get_logger(__name__)

# A near-duplicate is the same fact said again: very similar (MiniLM cosine; paraphrases
# sit at 0.8-0.9) AND made of the same words. Similarity alone is not enough: two episodes
# that differ only in their run ids, or a rule whose "never" became "always", score 0.95+.
NEAR_DUPLICATE = 0.95
PRINCIPLE_REFUSED = "a principle is written only by the constitution sync (constitution.md)"
# Words that never change what a lesson says. Fewer than the index's stop words on purpose:
# "always", "not" and "all" are stop words there, but here they flip or widen a rule.
_FILLER_WORDS = "a an the of to in on at for and or is are was were be it this that"
_FILLER = frozenset(_FILLER_WORDS.split())


def same_words(a: str, b: str) -> bool:
    def content(text: str) -> set[str]:
        return {word for word in map(normal, WORD.findall(text)) if word not in _FILLER}

    return content(a) == content(b)


class Harvester:
    """Holds the store's write side. Hooks, the CLI and backfill write only through it."""

    def __init__(
        self,
        store: Store,
        ledger: L.HarvestLedger,
        defaults: Defaults,
        *,
        timeout_seconds: float = 30.0,
    ) -> None:
        self._store = store
        self._ledger = ledger
        self.defaults = defaults
        self._timeout = timeout_seconds
        self._key_locks: defaultdict[str, anyio.Lock] = defaultdict(anyio.Lock)
        self.gate = Gate()

    def prepare(self, items: Sequence[Any], *, principles: bool = False) -> list[Payload]:
        """Stamp and validate a batch, all or nothing. Raises :class:`Rejected`."""
        payloads = validate_batch(
            [stamp(item, self.defaults) for item in items], user_id=self.defaults.user_id
        )
        if not principles:
            refused = [
                Rejection(f"[{i}].metadata.type", PRINCIPLE_REFUSED)
                for i, p in enumerate(payloads)
                if p.type == MemoryType.PRINCIPLE
            ]
            if refused:
                raise Rejected(refused)
        return payloads

    async def add(
        self,
        items: Sequence[Any],
        *,
        actor: str = "harvester",
        near_duplicates: bool = True,
        principles: bool = False,
    ) -> HarvestSummary:
        try:
            payloads = self.prepare(items, principles=principles)
        except Rejected as exc:
            await self._record(
                {"op": "add", "status": L.REJECTED, "actor": actor, "rejections": exc.as_list()}
            )
            raise
        summary = HarvestSummary(
            [await self.write(p, actor=actor, near_duplicates=near_duplicates) for p in payloads]
        )
        log.info(
            "harvest.written",
            actor=actor,
            total=len(summary.results),
            succeeded=summary.succeeded,
            skipped=summary.skipped,
            failed=summary.failed,
        )
        return summary

    async def write(
        self,
        payload: Payload,
        *,
        actor: str = "harvester",
        near_duplicates: bool = True,
        created_at: str | None = None,
    ) -> WriteResult:
        """One validated payload: deduplicate, ledger, send, confirm, ledger."""
        base = _described(payload)
        async with self.gate.shared(), self._key_locks[payload.key]:
            started = time.monotonic()
            # The stored memory this payload repeats, or why the store could not say.
            duplicate, dedupe_error = None, None
            try:
                duplicate = await self._existing(payload, near_duplicates)
            except (StoreError, TimeoutError) as exc:
                dedupe_error = exc
            entry = _entry("add", payload.key, actor)
            if duplicate is not None:
                await self._record(
                    {
                        **entry,
                        "status": L.DUPLICATE,
                        "memory_id": duplicate.id,
                        "stored_key": duplicate.key,
                    }
                )
                return WriteResult(True, L.DUPLICATE, memory_id=duplicate.id, **base)
            receipt = await self._attempt(payload, entry, created_at, dedupe_error)
            ms = round((time.monotonic() - started) * 1000)
            await self._record(_outcome(entry, payload, receipt, ms))
        if receipt.status == L.DUPLICATE:
            return WriteResult(True, L.DUPLICATE, memory_id=receipt.memory_id, ms=ms, **base)
        if not receipt.confirmed:
            log.warning(
                "harvest.unconfirmed", key=payload.key, status=receipt.status, error=receipt.error
            )
        return WriteResult(
            receipt.confirmed,
            receipt.status,
            memory_id=receipt.memory_id,
            event_id=receipt.event_id,
            ms=ms,
            error=receipt.error,
            **base,
        )

    async def _attempt(
        self,
        payload: Payload,
        entry: dict[str, Any],
        created_at: str | None,
        dedupe_error: StoreError | TimeoutError | None,
    ) -> WriteReceipt:
        """Ledger the write as pending, then send it (unless the store was unreachable)."""
        await self._record(
            {**entry, "status": L.PENDING, "payload": payload.as_dict(), "created_at": created_at}
        )
        if dedupe_error is not None:
            return WriteReceipt(
                "ERROR", error=f"store unreachable before the write: {dedupe_error}"
            )
        return await self._send(payload, created_at)

    async def _send(self, payload: Payload, created_at: str | None) -> WriteReceipt:
        scope = {"user_id": payload.user_id, "agent_id": payload.agent_id, "run_id": payload.run_id}
        try:
            with anyio.fail_after(self._timeout):
                return await self._store.add(
                    NewMemory(payload.text, scope, payload.flat_metadata(), created_at)
                )
        except TimeoutError:
            return WriteReceipt("TIMEOUT", error=f"no confirmation within {self._timeout:g}s")
        except StoreError as exc:
            return WriteReceipt("ERROR", error=str(exc))

    async def _existing(self, payload: Payload, near_duplicates: bool) -> MemoryRecord | None:
        with anyio.fail_after(self._timeout):
            same = await self._store.list(Filter(user_id=payload.user_id, key=payload.key))
            if same:
                return same[0]
            if not near_duplicates:
                return None
            scope = Filter(
                user_id=payload.user_id,
                app_ids=(payload.app_id,),
                types=(str(payload.metadata.type),),
                env=str(payload.metadata.env),
            )
            nearest = await self._store.search(payload.text, scope, 1)
        if (
            nearest
            and (nearest[0].score or 0.0) >= NEAR_DUPLICATE
            and same_words(nearest[0].text, payload.text)
        ):
            return nearest[0]
        return None

    async def update(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        actor: str = "harvester",
    ) -> MemoryRecord:
        """Change a memory's text or merge into its metadata, through the ledger."""
        with anyio.fail_after(self._timeout):
            current = await self._store.get(memory_id)
        if current is None:
            raise StoreError(f"no memory with id {memory_id}")
        if current.metadata.get("immutable") is True or current.type == MemoryType.PRINCIPLE:
            # Nothing about a principle changes here; the constitution sync rewrites it.
            raise StoreError(
                f"memory {memory_id} is immutable (a principle); neither its text nor its "
                "metadata can change (edit constitution.md instead)"
            )
        problems = change_rejections(current.metadata, text, metadata)
        if problems:
            raise Rejected(problems)  # the same limits as add; nothing is written
        entry = _entry("update", current.key or f"id:{memory_id}", actor, memory_id=memory_id)
        changes = {k: v for k, v in {"text": text, "metadata": metadata}.items() if v is not None}
        await self._record({**entry, "status": L.PENDING, "changes": changes})
        try:
            with anyio.fail_after(self._timeout):
                await self._store.update(memory_id, text=text, metadata=metadata)
                updated = await self._store.get(memory_id)
        except (StoreError, TimeoutError) as exc:
            await self._record({**entry, "status": "ERROR", "error": str(exc) or "timed out"})
            raise StoreError(f"update of {memory_id} failed: {exc}") from exc
        await self._record({**entry, "status": L.SUCCEEDED})
        assert updated is not None
        return updated

    async def delete(
        self, record: MemoryRecord, *, actor: str = "harvester", reason: str = ""
    ) -> bool:
        """Delete a memory; the ledger records it so a rebuild does not bring it back."""
        entry = _entry("delete", record.key or f"id:{record.id}", actor, memory_id=record.id)
        entry["reason"] = reason or None
        await self._record({**entry, "status": L.PENDING})
        try:
            with anyio.fail_after(self._timeout):
                await self._store.delete(record.id)
        except (StoreError, TimeoutError) as exc:
            await self._record({**entry, "status": "ERROR", "error": str(exc) or "timed out"})
            return False
        await self._record({**entry, "status": L.SUCCEEDED})
        return True

    async def replay(self) -> dict[str, int]:
        """Send again every operation the store never confirmed. Idempotent by content key."""
        pending = self._ledger.state().pending()
        done = sum([await self._replay_one(state) for state in pending])  # one at a time
        failed = len(pending) - done
        if pending:
            log.info("harvest.replayed", pending=len(pending), confirmed=done, still_pending=failed)
        return {"pending": len(pending), "confirmed": done, "still_pending": failed}

    async def _replay_one(self, state: L.KeyState) -> bool:
        user_id = (state.payload or {}).get("user_id")
        mine = user_id if isinstance(user_id, str) else self.defaults.user_id
        try:
            with anyio.fail_after(self._timeout):
                present = await self._store.list(Filter(user_id=mine, key=state.key))
        except (StoreError, TimeoutError) as exc:
            log.warning("harvest.replay_unreachable", key=state.key, error=str(exc))
            return False
        if not state.exists:
            results = [await self.delete(r, actor="replay") for r in present]
            if not present:
                await self._record({**_entry("delete", state.key, "replay"), "status": L.DUPLICATE})
            return all(results)
        if state.payload is None:
            return False
        payload = Payload.model_validate(state.payload)
        if state.last_op == "update" and present:
            try:
                await self.update(
                    present[0].id,
                    text=payload.text,
                    metadata=payload.flat_metadata(),
                    actor="replay",
                )
            except StoreError:
                return False
            return True
        result = await self.write(
            payload, actor="replay", near_duplicates=False, created_at=state.created_at
        )
        return result.ok

    async def _record(self, entry: dict[str, Any]) -> None:
        clean = {k: v for k, v in entry.items() if v is not None}
        # fsync off the event loop; the line is on disk before we go on.
        await anyio.to_thread.run_sync(self._ledger.record, clean)


def _entry(op: str, key: str, actor: str, **named: Any) -> dict[str, Any]:
    """The fields every ledger line of one new attempt carries (``named``: the memory id)."""
    return {"op": op, "attempt": L.new_attempt(), "key": key, **named, "actor": actor}


def _described(payload: Payload) -> dict[str, Any]:
    """What every write result says about its payload."""
    meta = payload.metadata
    return {
        "key": payload.key,
        "type": str(meta.type),
        "app_id": payload.app_id,
        "source": meta.source,
        "harvest_run": meta.harvest_run,
    }


def _outcome(
    entry: dict[str, Any], payload: Payload, receipt: WriteReceipt, ms: int
) -> dict[str, Any]:
    """The ledger's record of what the store answered."""
    if receipt.status == L.DUPLICATE:
        # The store's own unique key refused it: another writer (another executive sharing
        # the store) stored this lesson first.
        return {
            **entry,
            "status": L.DUPLICATE,
            "memory_id": receipt.memory_id,
            "stored_key": receipt.detail.get("stored_key", payload.key),
            "ms": ms,
        }
    return {
        **entry,
        "status": receipt.status,
        "memory_id": receipt.memory_id,
        "event_id": receipt.event_id,
        "ms": ms,
        "error": receipt.error,
    }
