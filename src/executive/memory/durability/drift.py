"""Drift: the store against the repository, by content key, and the fix that makes them match.

What the store should hold is what a rebuild would write (:func:`rebuild.admitted`: the
ledgers' live keys that pass ``add``'s rules, a principle only while a trusted file holds its
rule); only this installation's memories are compared (a shared store holds others'). The
fix adds what is missing, deletes extras and restores changes, but never changes an
immutable memory's type or text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from executive.logs import get_logger
from executive.memory.durability.rebuild import admitted, installation, keeping_ids, write_all
from executive.memory.store.base import Filter, MemoryRecord, Store
from executive.memory.taxonomy import MemoryType
from executive.memory.write.envelope import Payload
from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import KeyState, LedgerSource
from executive.memory.write.principles import TrustedRules

log = get_logger(__name__)

# The differences a fix acts on, in the order a report lists them.
_KINDS = ("missing", "extra", "changed")


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
        for kind in _KINDS:
            for item in getattr(self, kind):
                home = self.owners.get(item, "unknown")
                out.setdefault(home, {k: [] for k in _KINDS})[kind].append(item)
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
    unexpected = [r.id for k, rs in by_key.items() if k not in live for r in rs]
    copies = [r.id for rs in by_key.values() for r in rs[1:]]  # a key stored twice
    report = Drift(
        missing=sorted(k for k in live if k not in by_key),
        extra=sorted(unexpected + copies + [r.id for r in unkeyed]),
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
    user_id = harvester.defaults.user_id
    installation(user_id, "drift --fix")
    kept: list[dict[str, Any]] = []
    async with harvester.gate.exclusive():
        report, by_key, live = await drift(store, ledger, user_id, trusted)
        missing = keeping_ids(live[k] for k in report.missing)
        await write_all(store, missing, None, "drift.fix")
        for memory_id in report.extra:
            await store.delete(memory_id)
        for key in report.changed:
            payload = Payload.model_validate(live[key].payload)
            stored = by_key[key][0]
            immutable = (
                stored.metadata.get("immutable") is True or stored.type == MemoryType.PRINCIPLE
            )
            if immutable and (stored.text != payload.text or stored.type != payload.type):
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
    counts = {kind: len(getattr(report, kind)) for kind in _KINDS}
    log.info("drift.fixed", before=report.as_dict() | counts, clean=after.clean)
    if kept:
        log.warning("drift.kept_immutable", kept=kept)
    return {
        "ok": after.clean,
        "fixed": report.as_dict(),
        "kept_immutable": kept,
        "after": after.as_dict(),
    }
