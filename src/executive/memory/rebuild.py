"""Git is the source of truth: restore, rebuild, drift and purge.

The harvest ledger says what the store must hold (folded in order, deletions included).
``rebuild`` wipes the store and replays it; ``drift`` compares by content key and, with
``fix``, makes the store match; ``restore`` loads a snapshot into an empty store; ``purge``
deletes by env, cohort or app id *through the ledger*, so a rebuild does not bring them back.
Maintenance jobs hold the harvester's gate: no harvest write lands in the middle of one.

``restore`` and ``rebuild`` put every record through the same ``classify`` as ``add`` (and
this installation's user id) and report what they refused instead of writing it: a snapshot
or a ledger line is data, not a trusted write. A principle is admitted only while a trusted
file holds its rule (:mod:`executive.memory.principles`), whatever the line says wrote it;
``drift --fix`` never changes an immutable memory's type or text.

A store may be shared (Postgres, by executives of other installations): every tool here
reads, wipes and counts only this installation's memories (its user id), never another's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from executive.logs import get_logger
from executive.memory.classify import Rejection, classify
from executive.memory.envelope import Payload
from executive.memory.harvester import Harvester
from executive.memory.ledger import KeyState, LedgerSource
from executive.memory.principles import TrustedRules
from executive.memory.store.base import Filter, MemoryRecord, NewMemory, Store, StoreError
from executive.memory.taxonomy import MemoryType

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
    return {**where, "rejections": [{"field": r.field, "reason": r.reason} for r in rejections]}


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


async def _write_all(
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


def _keeping_ids(states: Iterable[KeyState]) -> list[NewMemory]:
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
    """Wipe this installation's memories and replay the ledgers: the store then holds what
    the repository (and, for principles, the trusted files) says."""
    started = time.monotonic()
    user_id = harvester.defaults.user_id
    mine = installation(user_id, "rebuild")
    live, refused = admitted(ledger, user_id, trusted)
    items = _keeping_ids(live.values())
    async with harvester.gate.exclusive():
        await store.wipe(mine.user_id)
        written = await _write_all(store, items, progress, "rebuild")
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
            items.append(
                NewMemory(
                    record.text,
                    {
                        "user_id": record.user_id or "",
                        "agent_id": record.agent_id or "",
                        "run_id": record.run_id or "",
                    },
                    dict(record.metadata),
                    record.created_at,
                )
            )
        written = await _write_all(store, items, progress, "restore")
    result = {"ok": True, "memories": written, "refused": refused}
    _finished("restore", result)
    return result


@dataclass
class Drift:
    missing: list[str] = field(default_factory=list)  # in the ledger, not in the store
    extra: list[str] = field(default_factory=list)  # in the store, not in the ledger (ids)
    changed: list[str] = field(default_factory=list)  # same key, different text or metadata
    # Ledger keys a rebuild would refuse (classify, or a principle not from the sync): not
    # expected in the store, so a stored copy is extra. A person reads why in the rebuild.
    refused: list[str] = field(default_factory=list)
    # Each difference (a key, or an extra's id) -> the home it belongs to: several homes may
    # share one store (EXECUTIVE_PEER_HOMES), and each fixes what its own ledger says.
    owners: dict[str, str] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not (self.missing or self.extra or self.changed)

    def by_home(self) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {}
        for kind in ("missing", "extra", "changed"):
            for item in getattr(self, kind):
                home = self.owners.get(item, "unknown")
                out.setdefault(home, {"missing": [], "extra": [], "changed": []})[kind].append(item)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "missing": self.missing,
            "extra": self.extra,
            "changed": self.changed,
            "refused": self.refused,
            "by_home": self.by_home(),
        }


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


def _differs(record: MemoryRecord, state: KeyState) -> bool:
    payload = Payload.model_validate(state.payload)
    expected = payload.flat_metadata()
    stored = {k: v for k, v in record.metadata.items() if k in expected}
    return record.text != payload.text or stored != expected


async def drift(
    store: Store, ledger: LedgerSource, user_id: str | None, trusted: TrustedRules
) -> tuple[Drift, dict[str, list[MemoryRecord]], dict[str, KeyState]]:
    """The store against the ledgers: this installation's memories only (with no user id,
    every memory: each then shows as extra, since ``add``'s rules refuse every line)."""
    live, refused = admitted(ledger, user_id, trusted)
    by_key: dict[str, list[MemoryRecord]] = {}
    unkeyed: list[MemoryRecord] = []
    for record in await store.list(Filter(user_id=user_id) if user_id else None):
        if record.key:
            by_key.setdefault(record.key, []).append(record)
        else:
            unkeyed.append(record)
    report = Drift(
        missing=sorted(k for k in live if k not in by_key),
        extra=sorted(
            [r.id for k, rs in by_key.items() if k not in live for r in rs]
            + [
                r.id for rs in by_key.values() for r in rs[1:]
            ]  # a key stored twice: the copy is extra
            + [r.id for r in unkeyed]
        ),
        changed=sorted(k for k, rs in by_key.items() if k in live and _differs(rs[0], live[k])),
        refused=sorted(r["key"] for r in refused),
    )
    for key in report.missing + report.changed:
        report.owners[key] = ledger.owner(live[key])
    stored = {r.id: r for rs in by_key.values() for r in rs} | {r.id: r for r in unkeyed}
    for memory_id in report.extra:
        record = stored[memory_id]
        report.owners[memory_id] = ledger.owner(
            live.get(record.key or ""), record.metadata.get("executive")
        )
    return report, by_key, live


async def fix_drift(
    store: Store, harvester: Harvester, ledger: LedgerSource, trusted: TrustedRules
) -> dict[str, Any]:
    """Make the store match the repository: add what is missing, drop extras, restore changes."""
    user_id = harvester.defaults.user_id
    installation(user_id, "drift --fix")
    kept: list[dict[str, Any]] = []
    async with harvester.gate.exclusive():
        report, by_key, live = await drift(store, ledger, user_id, trusted)
        await _write_all(
            store,
            _keeping_ids(live[k] for k in report.missing),
            None,
            "drift.fix",
        )
        for memory_id in report.extra:
            await store.delete(memory_id)
        for key in report.changed:
            payload = Payload.model_validate(live[key].payload)
            stored = by_key[key][0]
            if _immutable(stored) and (stored.text != payload.text or stored.type != payload.type):
                kept.append(
                    {
                        "key": key,
                        "id": stored.id,
                        "reason": "immutable: its type and text are never changed by a fix; "
                        "the constitution sync owns principles",
                    }
                )
                continue
            await store.update(stored.id, text=payload.text, metadata=payload.flat_metadata())
        after, _, _ = await drift(store, ledger, user_id, trusted)
    log.info(
        "drift.fixed",
        before=report.as_dict()
        | {
            "missing": len(report.missing),
            "extra": len(report.extra),
            "changed": len(report.changed),
        },
        clean=after.clean,
    )
    if kept:
        log.warning("drift.kept_immutable", kept=kept)
    return {
        "ok": after.clean,
        "fixed": report.as_dict(),
        "kept_immutable": kept,
        "after": after.as_dict(),
    }


def _immutable(record: MemoryRecord) -> bool:
    return record.metadata.get("immutable") is True or record.type == MemoryType.PRINCIPLE


async def purge(store: Store, harvester: Harvester, where: Filter, reason: str) -> dict[str, Any]:
    """Delete every memory of this installation matching ``where``, each one recorded in the
    ledger as a deletion."""
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
