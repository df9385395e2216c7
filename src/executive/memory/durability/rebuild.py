"""Git is the source of truth: restore, rebuild and purge (drift has its own module).

The harvest ledger says what the store must hold (folded in order, deletions included).
``rebuild`` wipes this installation's memories and replays it; ``restore`` loads a snapshot
into a store that holds none of this installation's memories; ``purge`` deletes by env,
cohort or app id *through the ledger*, so a rebuild does not bring them back.
Maintenance jobs hold the harvester's gate: no harvest write lands in the middle of one.

``restore`` and ``rebuild`` put every record through the same ``classify`` as ``add`` (and
this installation's user id) and report what they refused instead of writing it: a snapshot
or a ledger line is data, not a trusted write. A principle is admitted only while a trusted
file holds its rule (:mod:`executive.memory.write.principles`), whatever the line says wrote it.

A store may be shared (Postgres, by executives of other installations): every tool here
reads, wipes and counts only this installation's memories (its user id), never another's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from executive.logs import get_logger
from executive.memory.store.base import Filter, MemoryRecord, NewMemory, Store, StoreError
from executive.memory.taxonomy import MemoryType
from executive.memory.write.classify import classify
from executive.memory.write.envelope import Payload
from executive.memory.write.fields import Rejection
from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import KeyState, LedgerSource
from executive.memory.write.principles import TrustedRules

log = get_logger(__name__)

BATCH = 256
Progress = Callable[[int, int], None]


class RebuildError(RuntimeError):
    pass


def _new(
    payload: dict[str, Any],
    created_at: str | None,
    memory_id: str | None = None,
    history: list[dict[str, Any]] | None = None,
) -> NewMemory:
    model = Payload.model_validate(payload)
    return NewMemory(
        model.text,
        {"user_id": model.user_id, "agent_id": model.agent_id, "run_id": model.run_id},
        model.flat_metadata(),
        created_at,
        memory_id=memory_id,
        history=tuple(history or ()),
    )


def _refusal(where: dict[str, Any], rejections: list[Rejection]) -> dict[str, Any]:
    return {**where, "rejections": [r._asdict() for r in rejections]}


def _rejections(
    payload: dict[str, Any] | None, user_id: str | None, trusted: TrustedRules
) -> list[Rejection]:
    """What is wrong with a ledger payload or a snapshot record, by the rules of ``add``;
    a principle, besides, must be a rule a trusted file holds now."""
    out = classify(payload, user_id=user_id)
    if (
        not out
        and payload is not None
        and payload["metadata"].get("type") == MemoryType.PRINCIPLE
        and not trusted.holds(payload)
    ):
        out.append(trusted.refusal())
    return out


def installation(user_id: str | None, what: str) -> Filter:
    """This installation's memories: what a wipe, a count or a listing may touch."""
    if not user_id:
        raise RebuildError(
            f"{what} needs this installation's user id (V3_MEM0_USER_ID): without it, it "
            "would act on every installation's memories in a shared store"
        )
    return Filter(user_id=user_id)


def as_payload(record: MemoryRecord) -> dict[str, Any]:
    """A stored record as the payload that would have written it (app_id out of metadata)."""
    meta = dict(record.metadata)
    app_id = meta.pop("app_id", record.app_id)
    return {
        "text": record.text,
        "user_id": record.user_id,
        "agent_id": record.agent_id,
        "app_id": app_id,
        "run_id": record.run_id,
        "immutable": meta.get("immutable", False),
        "metadata": meta,
    }


def _snapshot_entry(
    entry: Any, user_id: str | None, trusted: TrustedRules
) -> tuple[MemoryRecord | None, list[Rejection]]:
    """A snapshot entry as a record, or why it may not be restored."""
    if not isinstance(entry, dict) or not isinstance(entry.get("memory"), dict):
        return None, [Rejection("memory", "must be an object")]
    try:
        record = MemoryRecord.model_validate(entry["memory"])
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "memory"
        return None, [Rejection(f"memory.{where}", first["msg"])]
    return record, _rejections(as_payload(record), user_id, trusted)


async def write_all(
    store: Store, items: list[NewMemory], progress: Progress | None, what: str
) -> int:
    written = 0
    for start in range(0, len(items), BATCH):
        receipts = await store.add_many(items[start : start + BATCH])
        failed = [r for r in receipts if not r.confirmed]
        if failed:
            raise RebuildError(
                f"{what}: {len(failed)} writes were not confirmed ({failed[0].error})"
            )
        written += len(receipts)
        log.info(f"{what}.progress", done=written, total=len(items))
        if progress:
            progress(written, len(items))
    return written


def _store_id(memory_id: str) -> bool:
    """Whether ``memory_id`` is an id a store gives (a UUID, as every store writes it)."""
    try:
        return str(UUID(memory_id)) == memory_id
    except ValueError:
        return False


def keeping_ids(states: Iterable[KeyState]) -> list[NewMemory]:
    """What to write back: each memory under the id it had, with its history.

    An id the ledger never saw, one two keys claim, or one no store gives (a ledger line is
    data: a hand edit, a corrupted line) gets a new id from the store, so one such line
    cannot fail the batch it is written in.
    """
    seen: set[str] = set()
    items = []
    for state in states:
        memory_id = state.memory_id if state.memory_id not in seen else None
        if memory_id and not _store_id(memory_id):
            log.warning("rebuild.new_id", key=state.key, ledger_id=memory_id[:80])
            memory_id = None
        if memory_id:
            seen.add(memory_id)
        items.append(_new(state.payload or {}, state.created_at, memory_id, state.history))
    return items


async def rebuild(
    store: Store,
    harvester: Harvester,
    ledger: LedgerSource,
    trusted: TrustedRules,
    progress: Progress | None = None,
) -> dict[str, Any]:
    started = time.monotonic()
    user_id = harvester.defaults.user_id
    mine = installation(user_id, "rebuild")
    live, refused = admitted(ledger, user_id, trusted)
    items = keeping_ids(live.values())
    async with harvester.gate.exclusive():
        await store.wipe(mine.user_id)
        written = await write_all(store, items, progress, "rebuild")
        count = await store.count(mine)
    if count != len(items):
        raise RebuildError(f"rebuild wrote {written} memories but the store counts {count}")
    result = {
        "ok": True,
        "memories": count,
        "refused": refused,
        "ledger_files": len(ledger.files()),
        "ms": round((time.monotonic() - started) * 1000),
    }
    _finished("rebuild", result)
    return result


def _finished(what: str, result: dict[str, Any]) -> None:
    """One line with the counts; the refusals, each with its reasons, on a warning."""
    refused = result["refused"]
    log.info(f"{what}.finished", **{**result, "refused": len(refused)})
    if refused:
        log.warning(f"{what}.refused", count=len(refused), refused=refused)


async def restore(
    store: Store,
    harvester: Harvester,
    document: dict[str, Any],
    trusted: TrustedRules,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Load a snapshot into a store that holds none of this installation's memories (keys,
    texts, metadata and creation times); another installation's may be there."""
    user_id = harvester.defaults.user_id
    mine = installation(user_id, "restore")
    async with harvester.gate.exclusive():
        present = await store.count(mine)
        if present:
            raise RebuildError(
                f"the store holds {present} memories of this installation; restore loads "
                "into a store that holds none"
            )
        items: list[NewMemory] = []
        refused: list[dict[str, Any]] = []
        for index, entry in enumerate(document["memories"]):
            record, rejections = _snapshot_entry(entry, user_id, trusted)
            if record is None or rejections:
                where = {"index": index, **({"id": record.id} if record else {})}
                refused.append(_refusal(where, rejections))
                continue
            items.append(_new(as_payload(record), record.created_at))
        written = await write_all(store, items, progress, "restore")
    result = {"ok": True, "memories": written, "refused": refused}
    _finished("restore", result)
    return result


def admitted(
    ledger: LedgerSource, user_id: str | None, trusted: TrustedRules
) -> tuple[dict[str, KeyState], list[dict[str, Any]]]:
    """The ledger's live keys that pass ``add``'s rules (a principle: a rule the trusted
    files hold now), and the refusals of the others.

    Rebuild, drift and its fix all start here, so they agree on what the store should hold.
    """
    keep: dict[str, KeyState] = {}
    refused: list[dict[str, Any]] = []
    for key, state in ledger.state().live().items():
        rejections = _rejections(state.payload, user_id, trusted)
        if rejections:
            refused.append(_refusal({"key": key}, rejections))
        else:
            keep[key] = state
    return keep, refused


async def purge(store: Store, harvester: Harvester, where: Filter, reason: str) -> dict[str, Any]:
    if not (where.env or where.cohort or where.app_ids):
        raise RebuildError("purge needs --env, --cohort or --app-id")
    mine = installation(harvester.defaults.user_id, "purge")
    matching = await store.list(where.narrowed(user_id=mine.user_id))
    deleted = failed = 0
    for record in matching:
        try:
            ok = await harvester.delete(record, actor="purge", reason=reason)
        except StoreError:
            ok = False
        deleted += ok
        failed += not ok
    log.info("purge.finished", matched=len(matching), deleted=deleted, failed=failed, reason=reason)
    return {"ok": failed == 0, "matched": len(matching), "deleted": deleted, "failed": failed}
