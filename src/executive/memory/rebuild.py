"""Git is the source of truth: restore, rebuild, drift and purge.

The harvest ledger says what the store must hold (folded in order, deletions included).
``rebuild`` wipes the store and replays it; ``drift`` compares by content key and, with
``fix``, makes the store match; ``restore`` loads a snapshot into an empty store; ``purge``
deletes by env, cohort or app id *through the ledger*, so a rebuild does not bring them back.
Maintenance jobs hold the harvester's gate: no harvest write lands in the middle of one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from executive.logs import get_logger
from executive.memory.envelope import Payload
from executive.memory.harvester import Harvester
from executive.memory.ledger import HarvestLedger, KeyState
from executive.memory.store.base import Filter, MemoryRecord, NewMemory, Store, StoreError

log = get_logger(__name__)

BATCH = 256
Progress = Callable[[int, int], None]


class RebuildError(RuntimeError):
    pass


def _new(payload: dict[str, Any], created_at: str | None) -> NewMemory:
    model = Payload.model_validate(payload)
    return NewMemory(
        model.text,
        {"user_id": model.user_id, "agent_id": model.agent_id, "run_id": model.run_id},
        model.flat_metadata(),
        created_at,
    )


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


async def rebuild(
    store: Store, harvester: Harvester, ledger: HarvestLedger, progress: Progress | None = None
) -> dict[str, Any]:
    """Wipe the store and replay the ledgers: the store then holds what the repository says."""
    started = time.monotonic()
    live = ledger.state().live()
    items = [_new(s.payload, s.created_at) for s in live.values() if s.payload is not None]
    async with harvester.gate.exclusive():
        await store.wipe()
        written = await _write_all(store, items, progress, "rebuild")
        count = await store.count(None)
    if count != len(items):
        raise RebuildError(f"rebuild wrote {written} memories but the store counts {count}")
    result = {
        "ok": True,
        "memories": count,
        "ledger_files": len(ledger.files()),
        "ms": round((time.monotonic() - started) * 1000),
    }
    log.info("rebuild.finished", **result)
    return result


async def restore(
    store: Store, harvester: Harvester, document: dict[str, Any], progress: Progress | None = None
) -> dict[str, Any]:
    """Load a snapshot into an empty store (keys, texts, metadata and creation times)."""
    async with harvester.gate.exclusive():
        present = await store.count(None)
        if present:
            raise RebuildError(
                f"the store is not empty ({present} memories); restore loads into an empty store"
            )
        items = []
        for entry in document["memories"]:
            memory = MemoryRecord.model_validate(entry["memory"])
            items.append(
                NewMemory(
                    memory.text,
                    {
                        "user_id": memory.user_id or "",
                        "agent_id": memory.agent_id or "",
                        "run_id": memory.run_id or "",
                    },
                    dict(memory.metadata),
                    memory.created_at,
                )
            )
        written = await _write_all(store, items, progress, "restore")
    log.info("restore.finished", memories=written)
    return {"ok": True, "memories": written}


@dataclass
class Drift:
    missing: list[str] = field(default_factory=list)  # in the ledger, not in the store
    extra: list[str] = field(default_factory=list)  # in the store, not in the ledger (ids)
    changed: list[str] = field(default_factory=list)  # same key, different text or metadata

    @property
    def clean(self) -> bool:
        return not (self.missing or self.extra or self.changed)

    def as_dict(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "missing": self.missing,
            "extra": self.extra,
            "changed": self.changed,
        }


def _differs(record: MemoryRecord, state: KeyState) -> bool:
    payload = Payload.model_validate(state.payload)
    expected = payload.flat_metadata()
    stored = {k: v for k, v in record.metadata.items() if k in expected}
    return record.text != payload.text or stored != expected


async def drift(
    store: Store, ledger: HarvestLedger
) -> tuple[Drift, dict[str, list[MemoryRecord]], dict[str, KeyState]]:
    live = ledger.state().live()
    by_key: dict[str, list[MemoryRecord]] = {}
    unkeyed: list[MemoryRecord] = []
    for record in await store.list(None):
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
    )
    return report, by_key, live


async def fix_drift(store: Store, harvester: Harvester, ledger: HarvestLedger) -> dict[str, Any]:
    """Make the store match the repository: add what is missing, drop extras, restore changes."""
    async with harvester.gate.exclusive():
        report, by_key, live = await drift(store, ledger)
        await _write_all(
            store,
            [_new(live[k].payload, live[k].created_at) for k in report.missing],
            None,
            "drift.fix",
        )
        for memory_id in report.extra:
            await store.delete(memory_id)
        for key in report.changed:
            payload = Payload.model_validate(live[key].payload)
            await store.update(
                by_key[key][0].id, text=payload.text, metadata=payload.flat_metadata()
            )
        after, _, _ = await drift(store, ledger)
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
    return {"ok": after.clean, "fixed": report.as_dict(), "after": after.as_dict()}


async def purge(store: Store, harvester: Harvester, where: Filter, reason: str) -> dict[str, Any]:
    """Delete every memory matching ``where``, each one recorded in the ledger as a deletion."""
    if not (where.env or where.cohort or where.app_ids):
        raise RebuildError("purge needs --env, --cohort or --app-id")
    matching = await store.list(where)
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
