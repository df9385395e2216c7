"""The daily snapshot: every memory in the store, with its history, as one JSON file.

``memory/snapshots/YYYY-MM-DD.json`` in the home, written atomically (temporary file, flush,
fsync, rename) and readable by the owner only. The listing is checked against the store's
own count, so a listing cap can never cut a snapshot short; a history that cannot be read is
recorded per memory and counted, never fatal. A same-day rerun replaces the file; a failed
run leaves the previous file as it was.

An empty store never buries a good copy: when this installation's memories are none but the
newest snapshot holds some (the store's folder was lost, or the store wiped), the run is
refused with its reason (:class:`SnapshotRefused`) and nothing is written or committed; a
rebuild (``executive mem rebuild``) comes first. Only the ledgers can say an empty store is
right (every memory purged): when they confirm none, the empty snapshot is written.
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

from executive.files import JsonLimitError, UnsafeFile, atomic_write, parse_json, read_regular
from executive.logs import get_logger
from executive.memory.store.base import Filter, StoreError, StoreReader

log = get_logger(__name__)

FILE_MODE = 0o600
# A restore reads the whole file; 256 MB holds some 200,000 memories with their history.
MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024


class SnapshotError(RuntimeError):
    pass


class SnapshotRefused(SnapshotError):
    """An empty snapshot would replace or follow a non-empty one: nothing was written."""


# The head of a snapshot as take() writes it: the total comes before the memories.
_TOTAL = re.compile(rb'^ "total": (\d+),$', re.MULTILINE)
_HEAD_BYTES = 4096


def latest(folder: Path) -> date | None:
    days = []
    for path in folder.glob("????-??-??.json") if folder.is_dir() else []:
        try:
            days.append(date.fromisoformat(path.stem))
        except ValueError:
            continue
    return max(days, default=None)


def recorded_total(path: Path) -> int:
    """How many memories a snapshot holds: read from its head, not the whole file."""
    with path.open("rb") as file:
        found = _TOTAL.search(file.read(_HEAD_BYTES))
    if found is not None:
        return int(found.group(1))
    return len(load(path)["memories"])  # written by hand or by another version: read it all


def _refuse_burying(folder: Path) -> None:
    """Raise when the newest snapshot holds memories (an empty one must not bury it)."""
    day = latest(folder)
    if day is None:
        return
    previous = folder / f"{day.isoformat()}.json"
    try:
        held = recorded_total(previous)
    except (OSError, SnapshotError) as exc:
        log.warning("snapshot.previous_unreadable", path=str(previous), error=str(exc))
        return
    if held == 0:
        return
    reason = (
        f"the store holds none of this installation's memories but {previous.name} holds "
        f"{held}: an empty snapshot is not written over or after it (the store's folder "
        "lost, or the store wiped?); run `executive mem rebuild`, then snapshot again"
    )
    log.error("snapshot.refused", previous=str(previous), previous_total=held, reason=reason)
    raise SnapshotRefused(reason)


def overdue(folder: Path, today: date | None = None) -> bool:
    """A run was missed: the latest snapshot is older than a day (or there is none)."""
    last = latest(folder)
    current = today or datetime.now(UTC).date()
    return last is None or current - last > timedelta(days=1)


async def take(
    store: StoreReader,
    folder: Path,
    *,
    user_id: str | None,
    now: datetime | None = None,
    expected: int | None = None,
) -> dict[str, Any]:
    """Write today's snapshot; returns ``{ok, path, total, history_failures, bytes, ms}``.

    This installation's memories (``user_id``) only: a shared store holds others' as well,
    which are neither this home's to keep in its history nor its to restore. ``expected``:
    the memories the harvest ledgers confirm (None: not known), which alone can make an
    empty snapshot after a non-empty one right.
    """
    started = time.monotonic()
    moment = now or datetime.now(UTC)
    mine = Filter(user_id=user_id) if user_id else None
    records = await store.list(mine)
    counted = await store.count(mine)
    if counted != len(records):
        raise SnapshotError(
            f"the listing returned {len(records)} memories but the store counts {counted}"
        )
    if not records and expected != 0:
        await anyio.to_thread.run_sync(_refuse_burying, folder)
    memories: list[dict[str, Any]] = []
    failures = 0
    for record in records:
        entry: dict[str, Any] = {"memory": record.model_dump(exclude_none=True)}
        try:
            entry["history"] = await store.history(record.id)
        except StoreError as exc:
            failures += 1
            entry["history_error"] = str(exc)
        memories.append(entry)
    document = {
        "snapshot_date": moment.date().isoformat(),
        "snapshot_at": moment.isoformat(),
        "user_id": user_id,
        "total": len(memories),
        "history_failures": failures,
        "memories": memories,
    }
    text = json.dumps(document, indent=1, default=str) + "\n"
    path = folder / f"{moment.date().isoformat()}.json"
    await anyio.to_thread.run_sync(lambda: atomic_write(path, text, mode=FILE_MODE))
    result = {
        "ok": True,
        "path": str(path),
        "total": len(memories),
        "history_failures": failures,
        "bytes": len(text.encode()),
        "ms": round((time.monotonic() - started) * 1000),
    }
    log.info("snapshot.written", **result)
    return result


def load(path: Path) -> dict[str, Any]:
    """Read a snapshot: a regular file (no FIFO, no link), bounded in size and nesting."""
    try:
        raw = read_regular(path, MAX_SNAPSHOT_BYTES)
        document = parse_json(raw, max_bytes=MAX_SNAPSHOT_BYTES)
    except FileNotFoundError:
        raise SnapshotError(f"no snapshot at {path}") from None
    except (OSError, UnsafeFile, JsonLimitError) as exc:
        raise SnapshotError(f"{path} is not a readable snapshot: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("memories"), list):
        raise SnapshotError(f"{path} is not a snapshot (no 'memories' list)")
    return document
