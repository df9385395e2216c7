"""The harvest ledger: every memory write, stamped, in the agent home. The canonical log.

``ledgers/harvest-runs/YYYY-MM-DD.jsonl`` (UTC date of the attempt). Each attempt writes a
``PENDING`` line before the store is called and a result line after; both are flushed to
disk before the caller hears back. Folding the lines in order gives what the store *should*
hold (the repository wins) and which operations the store never confirmed (to replay).

A skipped duplicate (``op: add, status: DUPLICATE``) names the memory the store already
holds; it never carries the skipped payload into the fold. Older ledgers wrote that payload
on the skip line: the fold ignores it, so those ledgers fold the same way.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from executive.dates import now_iso
from executive.files import append_jsonl, read_jsonl

PENDING = "PENDING"
SUCCEEDED = "SUCCEEDED"
DUPLICATE = "DUPLICATE"
REJECTED = "REJECTED"
# A result that confirms the store holds (or no longer holds) what the line says.
CONFIRMED = frozenset({SUCCEEDED, DUPLICATE})


def new_attempt() -> str:
    return uuid.uuid4().hex[:16]


@dataclass
class KeyState:
    """What the ledger says about one content key, after folding every line."""

    key: str
    exists: bool = False
    payload: dict[str, Any] | None = None
    memory_id: str | None = None
    last_op: str = ""
    confirmed: bool = True
    attempts: int = 0
    last_error: str | None = None
    created_at: str | None = None
    # The memory's text history as the store kept it: the ADD, then each UPDATE of its text
    # ({"event", "old", "new", "at"}), so a rebuild can give it back.
    history: list[dict[str, Any]] = field(default_factory=list)
    # The home whose line the key's state came from last, when several homes' ledgers are
    # folded together (executives sharing one store); None for a single ledger.
    home: str | None = None


@dataclass
class LedgerState:
    keys: dict[str, KeyState] = field(default_factory=dict)

    def live(self) -> dict[str, KeyState]:
        """Keys the repository says the store must hold."""
        return {k: s for k, s in self.keys.items() if s.exists and s.payload is not None}

    def pending(self) -> list[KeyState]:
        """Keys whose last operation the store never confirmed."""
        return [s for s in self.keys.values() if not s.confirmed]


class LedgerSource(Protocol):
    """What the rebuild tools read: one home's ledger, or several homes' (``shared.py``)."""

    def files(self) -> list[Path]: ...

    def state(self) -> LedgerState: ...

    def owner(self, state: KeyState | None, executive: Any = None) -> str: ...


class HarvestLedger:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path_for(self) -> Path:
        """Today's file (UTC): an attempt's lines go to the day it was made."""
        return self.folder / f"{datetime.now(UTC).date().isoformat()}.jsonl"

    def record(self, entry: dict[str, Any]) -> dict[str, Any]:
        line = {"ts": now_iso(), **entry}
        append_jsonl(self.path_for(), line)
        return line

    def files(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(self.folder.glob("*.jsonl"))

    def entries(self) -> Iterator[dict[str, Any]]:
        for path in self.files():
            yield from read_jsonl(path)

    def state(self) -> LedgerState:
        return fold(self.entries())

    def owner(self, state: KeyState | None, executive: Any = None) -> str:
        """The home a drift belongs to: with one ledger, always this one."""
        return str(self.folder.parent.parent)


def fold(entries: Iterator[dict[str, Any]]) -> LedgerState:
    """Replay the ledger in order into the state of every key."""
    state = LedgerState()
    # An attempt is one operation; its last line carries its final status. Attempts apply
    # in the order of their first lines (a dict keeps it).
    attempts: dict[str, dict[str, Any]] = {}
    for entry in entries:
        key, attempt = entry.get("key"), entry.get("attempt")
        if not isinstance(key, str) or not isinstance(attempt, str):
            continue
        if entry.get("status") == REJECTED:
            continue
        if attempt in attempts:
            attempts[attempt].update({k: v for k, v in entry.items() if v is not None})
        else:
            attempts[attempt] = dict(entry)
    for merged in attempts.values():
        _apply(state, merged)
    return state


def _apply(state: LedgerState, entry: dict[str, Any]) -> None:
    key = entry["key"]
    op, status = entry.get("op"), entry.get("status")
    if op == "add" and status == DUPLICATE:
        _skip(state, entry)
        return
    current = state.keys.setdefault(key, KeyState(key))
    confirmed = status in CONFIRMED
    if op == "add":
        payload = entry.get("payload")
        if isinstance(payload, dict):
            if not current.exists or current.payload is None:
                # A new life for this key (a first add, or one after a delete).
                current.history = []
            current.payload = payload
            current.created_at = current.created_at or entry.get("created_at") or entry.get("ts")
            if not current.history:
                current.history.append(_event("ADD", None, payload.get("text"), current.created_at))
        current.exists = True
    elif op == "update" and current.payload is not None:
        changes = entry.get("changes") or {}
        payload = dict(current.payload)
        if isinstance(changes.get("text"), str):
            if changes["text"] != payload.get("text"):
                old, new = payload.get("text"), changes["text"]
                current.history.append(_event("UPDATE", old, new, entry.get("ts")))
            payload["text"] = changes["text"]
        if isinstance(changes.get("metadata"), dict):
            payload["metadata"] = {**payload.get("metadata", {}), **changes["metadata"]}
        current.payload = payload
    elif op == "delete":
        current.exists = False
    else:
        return
    if _memory_id(entry):
        current.memory_id = entry["memory_id"]
    if entry.get("home"):
        current.home = entry["home"]
    if current.last_op != op or confirmed:
        current.attempts = 0
    current.last_op = str(op)
    current.confirmed = confirmed
    current.attempts += 1
    current.last_error = None if confirmed else (entry.get("error") or status)


def _event(event: str, old: Any, new: Any, at: Any) -> dict[str, Any]:
    """One step of a memory's text history, as the store keeps it."""
    return {"event": event, "old": old, "new": new, "at": at}


def _memory_id(entry: dict[str, Any]) -> bool:
    """Whether the line names a memory id: a line is data, and an id is a non-empty string."""
    return isinstance(entry.get("memory_id"), str) and bool(entry["memory_id"])


def _skip(state: LedgerState, entry: dict[str, Any]) -> None:
    """A duplicate skipped: the store holds a memory already; what the ledger says stays.

    Under its own key a skip confirms a pending add of the same key (a replay that found
    the first try landed). A skip under a key the ledger does not hold as live (a
    near-duplicate of another memory) adds nothing: that key is not in the store.
    """
    current = state.keys.get(entry["key"])
    if current is None or not current.exists or current.last_op != "add":
        return
    if _memory_id(entry):
        current.memory_id = entry["memory_id"]
    current.confirmed = True
    current.attempts = 0
    current.last_error = None
