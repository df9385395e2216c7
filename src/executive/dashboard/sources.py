"""What the pages show, read from what the daemon already keeps: files, the store, the observer.

Files are read bounded (the last ``TAIL_BYTES`` of a ledger), the store only through its read
view, and nothing here writes anything.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from executive.dates import parse_instant
from executive.home import Home
from executive.hookspecs import HookName
from executive.memory.durability import Member, SharedLedgers, member
from executive.memory.store import Filter, MemoryRecord, ReadView
from executive.memory.taxonomy import MemoryType
from executive.memory.write import HarvestLedger
from executive.observe import HookRun
from executive.workspace import operator
from executive.workspace.state import StepState

# A 24/7 ledger grows without end; the pages look at its recent past only.
TAIL_BYTES = 4 * 1024 * 1024
TYPES = [t.value for t in MemoryType]


def tail_jsonl(path: Path, max_bytes: int = TAIL_BYTES) -> list[dict[str, Any]]:
    """The records of the last ``max_bytes`` of a JSON-lines file (a torn line is skipped)."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    if size > max_bytes:
        lines = lines[1:]  # the first line was cut in the middle
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def harvest_entries(home: Home) -> list[dict[str, Any]]:
    folder = HarvestLedger(home.harvest_runs)
    return [entry for path in folder.files() for entry in tail_jsonl(path)]


@dataclass
class BundleView:
    slug: str
    title: str
    folder: str  # lifecycle folder: ondeck, P0..P4, completed, blocked
    status: str
    steps: list[StepState]
    spawns: list[dict[str, Any]] = field(default_factory=list)
    diagnosis: HookRun | None = None

    @property
    def attempts(self) -> int:
        return sum(s.attempts + (1 if s.status == "done" else 0) for s in self.steps)

    @property
    def last_error(self) -> str:
        return next((s.last_error for s in reversed(self.steps) if s.last_error), "")


def bundles(home: Home, observer_runs: list[HookRun]) -> list[BundleView]:
    spawns: dict[str, list[dict[str, Any]]] = {}
    for event in tail_jsonl(home.work_ledger):
        if event.get("event") == "STEP_STARTED" and isinstance(event.get("bundle"), str):
            spawns.setdefault(event["bundle"], []).append(event)
    # Each bundle's last diagnosis: a later run replaces an earlier one.
    diagnoses = {r.bundle: r for r in observer_runs if r.hook == HookName.FAIL_DIAG}
    views = []
    for found in operator.list_bundles(home):
        state = found.state
        slug = state.slug if state else found.slug
        views.append(
            BundleView(
                slug=slug,
                title=state.title if state else found.slug,
                folder=found.where,
                status=state.status if state else "queued",
                steps=state.steps if state else [],
                spawns=spawns.get(slug, []),
                diagnosis=diagnoses.get(slug),
            )
        )
    return views


def ledger_runs(ledger: list[dict[str, Any]], *, before: str) -> list[HookRun]:
    """Hook runs the work ledger recorded before this process started (no tail: the ledger
    keeps none; the observer keeps this process's own runs, tails included)."""
    start = parse_instant(before)
    runs = []
    for event in ledger:
        when = parse_instant(event.get("ts"))
        if event.get("event") != "EXECUTIVE_SKILL_USED" or event.get("outcome") == "skipped":
            continue
        if when is None or start is None or when >= start:
            continue
        runs.append(
            HookRun(
                id=0,
                at=when.isoformat(timespec="seconds"),
                hook=str(event.get("hook", "")),
                engine=str(event.get("engine", "")),
                outcome=str(event.get("outcome", "")),
                duration_ms=int(event.get("duration_ms") or 0),
                tools=dict(event.get("tools") or {}),
                writes={k: int(v) for k, v in (event.get("writes") or {}).items()},
                tail="",
                error=event.get("error"),
                bundle=None,
                step=None,
            )
        )
    return runs


def hook_durations(ledger: list[dict[str, Any]]) -> dict[str, list[tuple[datetime, float]]]:
    """Per hook: (when, seconds) of every run the work ledger recorded."""
    series: dict[str, list[tuple[datetime, float]]] = {}
    for event in ledger:
        if event.get("event") != "EXECUTIVE_SKILL_USED" or event.get("outcome") == "skipped":
            continue
        when, ms = parse_instant(event.get("ts")), event.get("duration_ms")
        if when is None or not isinstance(ms, int | float):
            continue
        series.setdefault(str(event.get("hook")), []).append((when, ms / 1000))
    return series


def attempts_per_outcome(ledger: list[dict[str, Any]]) -> dict[str, Counter[int]]:
    """How many attempts steps took, by how they ended: passed, or blocked."""
    out: dict[str, Counter[int]] = {"passed": Counter(), "blocked": Counter()}
    for event in ledger:
        if event.get("event") == "STEP_COMPLETED" and isinstance(event.get("attempts"), int):
            out["passed"][event["attempts"]] += 1
        elif event.get("event") == "GOAL_BLOCKED" and isinstance(event.get("attempts"), int):
            out["blocked"][event["attempts"]] += 1
    return out


def memory_growth(entries: list[dict[str, Any]]) -> dict[str, list[tuple[datetime, int]]]:
    """Memories by type over time, replayed from the harvest ledger (the source of truth)."""
    kinds: dict[str, str] = {}  # key -> type, from the payload its pending line carries
    alive: dict[str, str] = {}
    series: dict[str, list[tuple[datetime, int]]] = {t: [] for t in TYPES}
    for entry in entries:
        key, op, when = entry.get("key"), entry.get("op"), parse_instant(entry.get("ts"))
        if not isinstance(key, str):
            continue
        payload = entry.get("payload")
        if isinstance(payload, dict):
            kinds[key] = str((payload.get("metadata") or {}).get("type", ""))
        if when is None or entry.get("status") != "SUCCEEDED":
            continue
        if op == "add" and key not in alive and kinds.get(key) in series:
            kind = alive[key] = kinds[key]
        elif op == "delete" and key in alive:
            kind = alive.pop(key)
        else:
            continue
        series[kind].append((when, sum(1 for t in alive.values() if t == kind)))
    return {t: points for t, points in series.items() if points}


@dataclass(frozen=True)
class Browse:
    type: str = ""
    app: str = ""
    env: str = ""
    max_age_days: float | None = None


def browse(records: list[MemoryRecord], query: Browse) -> list[MemoryRecord]:
    moment = datetime.now(UTC)
    chosen = []
    for record in records:
        if query.type and record.type != query.type:
            continue
        if query.app and app_of(record) != query.app:
            continue
        if query.env and record.metadata.get("env") != query.env:
            continue
        if query.max_age_days is not None:
            created = parse_instant(record.created_at)
            if created is None or (moment - created).total_seconds() > query.max_age_days * 86400:
                continue
        chosen.append(record)
    return sorted(chosen, key=lambda r: r.created_at or "", reverse=True)


def app_of(record: MemoryRecord) -> str:
    return str(record.app_id or record.metadata.get("app_id") or "")


async def by_type(view: ReadView, user_id: str | None) -> dict[str, int]:
    counts = Counter(r.type for r in await view.list(Filter(user_id=user_id)))
    return {t: counts.get(t, 0) for t in TYPES}


async def drift(
    view: ReadView, home: Home, peers: Sequence[Path] = (), user_id: str | None = None
) -> dict[str, int]:
    """Keys the repository holds that the store lacks, and the other way round (counts).

    With peer homes sharing the store, "the repository" is every home's ledgers: another
    executive's memories are not extra; nor are another installation's (``user_id``) on a
    store several installations share.
    """
    others = [member(p) for p in peers if p != home.root]
    ledger = (
        SharedLedgers([Member(home.root, ""), *others])
        if others
        else HarvestLedger(home.harvest_runs)
    )
    live = ledger.state().live()
    mine = Filter(user_id=user_id) if user_id else None
    stored = Counter(r.key for r in await view.list(mine) if r.key)
    return {
        "missing": sum(1 for k in live if k not in stored),
        "extra": sum(1 for k in stored if k not in live) + sum(n - 1 for n in stored.values()),
    }
