"""Records and filters of the embedded store: our neutral filter as mem0 wants it, and what
mem0 (OSS or the Platform) or a stored payload holds as a
:class:`~executive.memory.store.base.MemoryRecord`."""

from __future__ import annotations

from sys import intern
from typing import Any

from executive.memory.store.base import Filter, MemoryRecord

# Payload keys mem0 keeps outside "metadata" (its core and promoted keys, as mem0 formats
# its results).
_HIDDEN = frozenset(
    {"data", "hash", "created_at", "updated_at", "id", "text_lemmatized", "attributed_to"}
    | {"user_id", "agent_id", "run_id", "actor_id", "role", "expiration_date"}
)


def compile_filter(where: Filter | None) -> dict[str, Any]:
    """The neutral filter as mem0 OSS / Qdrant want it: entity ids flat, the rest AND-ed."""
    out: dict[str, Any] = {}
    conditions: list[dict[str, Any]] = []
    for name, test, value in where.conditions() if where else ():
        if name in ("user_id", "agent_id", "run_id") and test == "eq":
            out[name] = value
        elif test in ("in", "gte"):
            conditions.append({name: {test: list(value) if test == "in" else value}})
        else:
            conditions.append({name: value})
    if conditions:
        out["AND"] = conditions
    return out


def record_from_item(item: dict[str, Any]) -> MemoryRecord:
    """A memory as mem0 answers it, OSS ``Memory`` or the Platform: OSS keeps ``app_id`` in
    metadata; the Platform's search answers ``run_id``, its get, update and v3 list
    ``session_id``."""
    meta = dict(item.get("metadata") or {})
    app_id = item.get("app_id") or meta.get("app_id")
    return MemoryRecord(
        id=str(item["id"]),
        text=item.get("memory") or item.get("text") or "",
        user_id=item.get("user_id"),
        agent_id=item.get("agent_id"),
        run_id=item.get("run_id") or item.get("session_id"),
        app_id=str(app_id) if app_id is not None else None,
        metadata=meta,
        created_at=item.get("created_at"),
        updated_at=item.get("updated_at"),
        score=item.get("score"),
    )


def record_from_payload(point_id: Any, payload: dict[str, Any]) -> MemoryRecord:
    """A stored payload as a record. Hot: a pack reads hundreds, so no re-validation of
    what our own writes validated (``MemoryRecord.stored``); the fields are those of
    ``record_from_item``, in the model's order."""
    meta = {intern(k): _shared(k, v) for k, v in payload.items() if k not in _HIDDEN}
    created, updated = payload.get("created_at"), payload.get("updated_at")
    return MemoryRecord.stored(
        {
            "id": point_id if isinstance(point_id, str) else str(point_id),
            "text": payload.get("data") or "",
            "user_id": _shared("user_id", payload.get("user_id")),
            "agent_id": _shared("agent_id", payload.get("agent_id")),
            "app_id": meta.get("app_id"),
            "run_id": payload.get("run_id"),
            "metadata": meta,
            "created_at": created,
            "updated_at": created if updated == created else updated,
            "score": None,
        }
    )


# Fields whose few values recur in every record: a store's records are kept (a cache of every
# memory, the word index), and one copy of "semantic" or a user id per record added up to
# ~6 MB at 10,000 memories (bench/daemon.py). Keys are shared the same way.
_RECURRING = frozenset({"user_id", "agent_id", "app_id", "type", "env", "source", "cohort"})


def _shared(key: str, value: Any) -> Any:
    return intern(value) if key in _RECURRING and isinstance(value, str) else value
