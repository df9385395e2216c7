"""Backfill: harvest the agent home's existing corpus through four lanes.

* A, principles: each numbered rule of ``constitution.md`` (and configured spec files) →
  an immutable principle, confidence 1.0. Principles whose rule is gone are deleted through
  the ledger: the repository wins. The daemon runs this lane itself when the constitution
  changes (and Hook B is on), so a pack can carry the rules.
* B, retrospectives: every ``learning/retrospectives/*.md`` through Hook E's distiller.
* C, capabilities: the Demonstrated and Reliable entries of ``capabilities.yml`` → semantic
  snapshots that expire 90 days out.
* D, episodes: one episodic memory per completed bundle, its outcome from the work ledger,
  unless memory already holds an episode of that bundle.

Lanes deduplicate against each other (content key) and against the store (the harvester's
key and near-duplicate checks). ``dry_run`` returns the stamped payloads and writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from executive.corpus.distill import distill, unstamped
from executive.home import Home
from executive.logs import get_logger
from executive.memory.durability import Member
from executive.memory.store import Filter, ReadView
from executive.memory.taxonomy import GLOBAL_APP, SKILL_APP_PREFIX, slugify, today
from executive.memory.write import Harvester, Rejected, TrustedRules
from executive.workspace.ledger import WorkLedger
from executive.workspace.retrospective import parse_lessons
from executive.workspace.state import StateError, read_state

log = get_logger(__name__)

LANES = ("A", "B", "C", "D")
_RULE = re.compile(r"^\s*(\d+)[.)]\s+(.+)$")
CAPABILITY_DAYS = 90
PROVEN = {"demonstrated": 0.75, "reliable": 0.9}
_COUNTS = ("planned", "written", "skipped", "failed")


@dataclass
class Lane:
    name: str
    # (source, payloads)
    batches: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def payloads(self) -> list[dict[str, Any]]:
        return [p for _, batch in self.batches for p in batch]


def numbered_rules(text: str) -> list[tuple[int, str]]:
    rules: list[tuple[int, str]] = []
    for line in text.splitlines():
        match = _RULE.match(line)
        if match:
            rules.append((int(match.group(1)), " ".join(match.group(2).split())))
        elif rules and line.startswith(("   ", "\t")) and line.strip():
            number, rule = rules[-1]
            rules[-1] = (number, f"{rule} {line.strip()}")
    return rules


def lane_a(home: Home, spec_files: Sequence[str] = ()) -> Lane:
    lane = Lane("A")
    for rel in ["constitution.md", *spec_files]:
        path = home.root / rel
        if not path.is_file():
            lane.notes.append(f"{rel}: not found")
            continue
        name = "constitution" if rel == "constitution.md" else slugify(Path(rel).stem)
        payloads = [
            unstamped(
                f"{rule} ({name} rule {number})",
                GLOBAL_APP,
                f"{today()}-spec-{name}",
                type="principle",
                category="project",
                importance="critical",
                confidence=1.0,
                trigger="spec-merge",
                source=rel,
                tags=[name, f"rule-{number}"],
            )
            for number, rule in numbered_rules(path.read_text())
        ]
        lane.batches.append((rel, payloads))
    return lane


def trusted_rules(members: Sequence[Member], own: Path) -> TrustedRules:
    """The principles lane A would write now from every member home's trusted files: the
    only proof a principle may exist (rebuild, restore and drift admit no other)."""
    payloads: list[dict[str, Any]] = []
    files: list[str] = []
    for m in members:
        lane = lane_a(Home(m.home), m.spec_files)
        payloads += lane.payloads
        files += [rel if m.home == own else f"{m.home}/{rel}" for rel, _ in lane.batches]
    return TrustedRules.of(payloads, files)


def lane_b(home: Home) -> Lane:
    lane = Lane("B")
    for path in sorted(home.retrospectives.glob("*.md")) if home.retrospectives.is_dir() else []:
        rel = str(path.relative_to(home.root))
        day = re.search(r"\d{4}-\d{2}-\d{2}", path.stem)
        run_id = f"{day.group(0) if day else today()}-retro-{slugify(path.stem)}"
        batch = []
        for lesson in parse_lessons(path.read_text()):
            distilled = distill(lesson, source=rel, run_id=run_id, trigger="manual-harvest")
            if distilled.payload is None:
                lane.notes.append(f"{rel}: skipped ({distilled.why}): {lesson.text[:60]}")
            else:
                batch.append(distilled.payload)
        lane.batches.append((rel, batch))
    return lane


def lane_c(home: Home) -> Lane:
    lane = Lane("C")
    if not home.capabilities.is_file():
        lane.notes.append("capabilities.yml: not found")
        return lane
    try:
        data = yaml.safe_load(home.capabilities.read_text()) or {}
    except yaml.YAMLError as exc:
        lane.notes.append(f"capabilities.yml: not valid YAML: {exc}")
        return lane
    moment = datetime.now(UTC)
    expires = (moment + timedelta(days=CAPABILITY_DAYS)).strftime("%Y-%m-%dT%H:%M:%SZ")
    batch = []
    for entry in data.get("capabilities", []) if isinstance(data, dict) else []:
        status = str(entry.get("status", "")).lower()
        name = str(entry.get("name", "")).strip()
        if status not in PROVEN or not name:
            lane.notes.append(f"capability {name or '?'}: status {status or 'missing'}, not proven")
            continue
        evidence = ", ".join(str(e) for e in entry.get("evidence") or [])
        text = f"Capability {name} is {status} as of {moment.date()}: {entry.get('summary', '').strip()}"
        batch.append(
            unstamped(
                text + (f" Evidence: {evidence}." if evidence else ""),
                f"{SKILL_APP_PREFIX}{slugify(name)}",
                f"{moment.date()}-manual-capabilities",
                type="semantic",
                category="technical",
                importance="medium",
                confidence=PROVEN[status],
                trigger="manual-harvest",
                actor="executive",
                source="capabilities.yml",
                tags=["capability-snapshot"],
                expires_at=expires,
            )
        )
    lane.batches.append(("capabilities.yml", batch))
    return lane


def lane_d(home: Home, ledger: WorkLedger) -> Lane:
    lane = Lane("D")
    events = list(ledger.events("GOAL_COMPLETED", "STEP_FAILED", "STEP_STARTED"))
    for folder in sorted(p for p in home.completed.glob("*") if p.is_dir()):
        try:
            state = read_state(folder)
        except StateError as exc:
            lane.notes.append(f"{folder.name}: {exc}")
            continue
        if state is None or state.status != "completed":
            lane.notes.append(f"{folder.name}: no completed STEPS.json")
            continue
        mine = [e for e in events if e.get("bundle") == state.slug]
        failures = sum(1 for e in mine if e["event"] == "STEP_FAILED")
        vendors = [
            e.get("vendor") for e in mine if e["event"] == "STEP_STARTED" and e.get("vendor")
        ]
        day = (state.finished_at or today())[:10]
        worker = (
            {"actor": "worker", "worker_vendor": vendors[-1]} if vendors else {"actor": "human"}
        )
        text = (
            f"Bundle {state.slug} (“{state.title}”) completed on {day}: "
            f"{len(state.steps)} step(s) ({'; '.join(s.title for s in state.steps)}), "
            f"{failures} failed attempt(s) on the way."
        )
        episode = unstamped(
            text,
            state.slug,
            f"{day}-{state.slug}",
            type="episodic",
            category="project",
            importance="medium",
            confidence=1.0,
            trigger="manual-harvest",
            source=f"{folder.relative_to(home.root)}/PROMPT.md",
            outcome="success",
            **worker,
        )
        lane.batches.append((str(folder.relative_to(home.root)), [episode]))
    return lane


async def run(
    harvester: Harvester,
    view: ReadView,
    home: Home,
    ledger: WorkLedger,
    *,
    lanes: Sequence[str] = LANES,
    dry_run: bool = False,
    spec_files: Sequence[str] = (),
) -> dict[str, Any]:
    """Plan every lane, deduplicate across them, then write (or, dry, only show)."""
    unknown = [lane for lane in lanes if lane not in LANES]
    if unknown:
        raise ValueError(f"unknown lane(s) {', '.join(unknown)}; lanes are A, B, C, D")
    builders = {
        "A": lambda: lane_a(home, spec_files),
        "B": lambda: lane_b(home),
        "C": lambda: lane_c(home),
        "D": lambda: lane_d(home, ledger),
    }
    planned = [builders[name]() for name in LANES if name in lanes]  # all read before any write
    seen: set[str] = set()
    report: dict[str, Any] = {"ok": True, "dry_run": dry_run, "lanes": {}}
    for lane in planned:
        summary: dict[str, Any] = {**dict.fromkeys(_COUNTS, 0), "notes": lane.notes}
        if dry_run:
            summary["payloads"] = []
        for source, batch in lane.batches:
            ok = await _batch(harvester, view, lane, source, batch, seen, summary, dry_run)
            report["ok"] = report["ok"] and ok
        if lane.name == "A" and not dry_run:
            sources = {source for source, _ in lane.batches}
            summary["pruned"] = await _prune_principles(harvester, view, seen, sources)
        report["lanes"][lane.name] = summary
    log.info(
        "backfill.finished",
        dry_run=dry_run,
        lanes={k: {x: v[x] for x in _COUNTS} for k, v in report["lanes"].items()},
    )
    return report


async def _batch(
    harvester: Harvester,
    view: ReadView,
    lane: Lane,
    source: str,
    batch: list[dict[str, Any]],
    seen: set[str],
    summary: dict[str, Any],
    dry_run: bool,
) -> bool:
    """One source's memories: stamped, deduplicated across lanes, then written (or, dry,
    shown); counted in ``summary``. False when any was rejected or failed."""
    try:
        # Lane A is the constitution sync: the one path allowed to write principles.
        prepared = harvester.prepare(batch, principles=lane.name == "A")
    except Rejected as exc:
        summary["failed"] += len(batch)
        lane.notes.append(f"{source}: rejected, nothing written: {exc}")
        return False
    fresh = []
    for payload, stamped in zip(batch, prepared, strict=True):
        known = stamped.key in seen or (
            lane.name == "D" and await _episode_known(view, harvester, stamped.app_id)
        )
        seen.add(stamped.key)
        if known:
            summary["skipped"] += 1  # another lane (or source) already has it
            continue
        fresh.append(payload if not dry_run else stamped.as_dict())
    summary["planned"] += len(fresh)
    if dry_run:
        summary["payloads"] += fresh
        return True
    if not fresh:
        return True
    result = await harvester.add(fresh, actor=f"backfill:{lane.name}", principles=lane.name == "A")
    summary["written"] += result.succeeded
    summary["skipped"] += result.skipped
    summary["failed"] += result.failed
    return result.ok


async def _episode_known(view: ReadView, harvester: Harvester, app_id: str) -> bool:
    where = Filter(user_id=harvester.defaults.user_id, app_ids=(app_id,), types=("episodic",))
    return bool(await view.list(where))


async def _prune_principles(
    harvester: Harvester, view: ReadView, keep: set[str], sources: set[str]
) -> int:
    """Delete this executive's principles harvested from these specs whose rule is gone: each
    executive sharing a store has a constitution, and a principle belongs to its writer."""
    where = Filter(user_id=harvester.defaults.user_id, app_ids=(GLOBAL_APP,), types=("principle",))
    mine = harvester.defaults.executive
    stale = [
        r
        for r in await view.list(where)
        if r.metadata.get("trigger") == "spec-merge"
        and r.source in sources
        and r.key not in keep
        and r.metadata.get("executive") in (None, mine)
    ]
    for record in stale:
        await harvester.delete(
            record, actor="backfill:A", reason="the rule is no longer in its spec"
        )
    return len(stale)
