"""Retrospectives: in the idle branch, when one is due, written from the work ledger.

Due when ``EXECUTIVE_RETRO_AFTER_OUTCOMES`` new step outcomes are in the ledger, or when
there is at least one and ``EXECUTIVE_RETRO_INTERVAL_DAYS`` have passed since the last.
Lessons are derived by rule (a root signal that repeated, a failure a retry fixed, a slow
step, the steps of a finished bundle), each tagged for Hook E.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from executive.dates import parse_instant
from executive.files import atomic_write
from executive.home import Home
from executive.hooks.context import PostRetroContext
from executive.loop.contexts import recorded_experience, run_experiences, told
from executive.untrusted import one_line
from executive.workers.record import listed, unsafe_command
from executive.workspace.bundle import SLOW_FACTOR
from executive.workspace.ledger import LedgerFold, WorkLedger
from executive.workspace.retrospective import Lesson, Retrospective

OUTCOME_EVENTS = ("STEP_COMPLETED", "STEP_FAILED", "GOAL_BLOCKED")


@dataclass(frozen=True)
class Due:
    since: str  # ISO time of the last retrospective ("" when there was none)
    outcomes: int


class Outcomes(LedgerFold):
    """What :func:`due` needs from the work ledger. The idle loop asks every tick, so this
    reads on from where it stopped: only the events appended since."""

    def reset(self) -> None:
        self.first: dict[str, Any] | None = None  # the ledger's first event
        self.since = ""  # the time of the last retrospective, "" when there was none
        self._times: list[str] = []  # every outcome's time, sorted

    def add(self, event: dict[str, Any]) -> None:
        if self.first is None:
            self.first = event
        if event.get("event") == "RETRO_WRITTEN":
            self.since = event["ts"]
        elif event.get("event") in OUTCOME_EVENTS:
            # Sorted, so the outcomes after any retrospective are counted without a scan.
            bisect.insort(self._times, event.get("ts", ""))

    def fresh(self) -> int:
        """Outcomes timed after the last retrospective."""
        return len(self._times) - bisect.bisect_right(self._times, self.since)


def due(
    outcomes: Outcomes, *, after_outcomes: int, interval_days: int, now: datetime | None = None
) -> Due | None:
    moment = now or datetime.now(UTC)
    outcomes.refresh()
    since, fresh = outcomes.since, outcomes.fresh()
    if not fresh:
        return None
    if fresh >= after_outcomes:
        return Due(since, fresh)
    assert outcomes.first is not None  # there is an outcome, so a first event
    ts = since or outcomes.first["ts"]
    start = parse_instant(ts)
    if start is None:  # the ledger's own times are always written aware: a broken ledger
        raise ValueError(f"not an ISO time in the work ledger: {ts!r}")
    return Due(since, fresh) if moment - start >= timedelta(days=interval_days) else None


def build(ledger: WorkLedger, since: str, now: datetime | None = None) -> Retrospective:
    moment = now or datetime.now(UTC)
    events = [e for e in ledger.events() if e.get("ts", "") > since]
    completed = [e for e in events if e.get("event") == "GOAL_COMPLETED"]
    blocked = [e for e in events if e.get("event") == "GOAL_BLOCKED"]
    failed = [e for e in events if e.get("event") == "STEP_FAILED"]
    steps_done = [e for e in events if e.get("event") == "STEP_COMPLETED"]
    by_signal: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in failed:
        by_signal[str(e.get("signal", "unknown"))].append(e)
    slow = [
        e
        for e in steps_done
        if e.get("estimated_seconds")
        and e.get("duration_seconds", 0) > SLOW_FACTOR * e["estimated_seconds"]
    ]
    period_start = (
        since[:10] if since else (events[0]["ts"][:10] if events else moment.date().isoformat())
    )
    return Retrospective(
        date=moment.date().isoformat(),
        period=f"{period_start} to {moment.date().isoformat()}",
        summary=(
            f"Outcomes: {len(steps_done)} step(s) completed, {len(failed)} failed attempt(s), "
            f"{len(completed)} bundle(s) completed, {len(blocked)} blocked"
        ),
        outcomes=_outcomes(completed, blocked),
        failures=_failures(by_signal),
        slow_steps=[
            f"- {e['bundle']} step {e.get('step')} “{e.get('step_title', '')}”: "
            f"{e['duration_seconds']:.0f}s, expected {e['estimated_seconds']:.0f}s "
            f"(run {e.get('contract_id')})"
            for e in slow
        ],
        changes=_changes(steps_done),
        lessons=[
            *_failure_lessons(by_signal, steps_done),
            *_slow_lessons(slow),
            *_steps_lessons(completed),
            *_fix_lessons(steps_done),
            *_rule_lessons(blocked),
        ],
    )


def _outcomes(completed: list[dict[str, Any]], blocked: list[dict[str, Any]]) -> list[str]:
    return [
        *(
            f"- completed: {e['bundle']} “{e.get('title', '')}” ({e.get('steps', 1)} step(s))"
            for e in completed
        ),
        *(
            f"- blocked: {e['bundle']} “{e.get('title', '')}”: {e.get('reason', '')}"
            for e in blocked
        ),
    ]


def _failures(by_signal: dict[str, list[dict[str, Any]]]) -> list[str]:
    return [
        f"- `{signal}`: {len(group)} failure(s) in {', '.join(sorted({g['bundle'] for g in group}))} "
        f"(runs {', '.join(str(g.get('contract_id')) for g in group)})"
        for signal, group in sorted(by_signal.items(), key=lambda kv: -len(kv[1]))
    ]


def _failure_lessons(
    by_signal: dict[str, list[dict[str, Any]]], steps_done: list[dict[str, Any]]
) -> list[Lesson]:
    """A signal seen twice is a pattern; seen once and passed on a retry, a fact."""
    passed_after = {(e["bundle"], e.get("step")): e for e in steps_done if e.get("attempts", 1) > 1}
    lessons: list[Lesson] = []
    for signal, group in by_signal.items():
        bundles = sorted({g["bundle"] for g in group})
        scope = bundles[0] if len(bundles) == 1 else "_global"
        runs = ", ".join(str(g.get("contract_id")) for g in group)
        recovered = [
            passed_after[k]
            for k in {(g["bundle"], g.get("step")) for g in group}
            if k in passed_after
        ]
        tail = " and passed on a retry" if recovered else ""
        if len(group) >= 2:
            text = f"{' and '.join(bundles)} failed {len(group)} times with “{signal}”{tail} (runs {runs})."
            lessons.append(Lesson("pattern", scope, text))
        elif recovered:
            step = recovered[0]
            text = (
                f"In bundle {bundles[0]}, step {step.get('step')} “{step.get('step_title', '')}” "
                f"can fail with “{signal}” and pass on a retry (run {runs})."
            )
            lessons.append(Lesson("fact", scope, text))
    return lessons


def _slow_lessons(slow: list[dict[str, Any]]) -> list[Lesson]:
    return [
        Lesson(
            "fact",
            e["bundle"],
            f"Step {e.get('step')} “{e.get('step_title', '')}” of bundle {e['bundle']} takes about {e['duration_seconds']:.0f}s, over twice its {e['estimated_seconds']:.0f}s estimate.",
        )
        for e in slow
    ]


def _steps_lessons(completed: list[dict[str, Any]]) -> list[Lesson]:
    lessons = []
    for e in completed:
        titles = e.get("step_titles") or []
        if len(titles) > 1:
            ordered = "; ".join(f"{i}. {t}" for i, t in enumerate(titles, 1))
            text = f"To complete “{e.get('title', '')}” (bundle {e['bundle']}): {ordered}."
            lessons.append(Lesson("steps", e["bundle"], text))
    return lessons


def _rule_lessons(blocked: list[dict[str, Any]]) -> list[Lesson]:
    return [
        Lesson(
            "rule",
            "_global",
            f"Consider a rule for bundles like {e['bundle']}: it was blocked after {e.get('attempts', '?')} attempts ({e.get('reason', '')}).",
        )
        for e in blocked
    ]


def _fix_lessons(steps_done: list[dict[str, Any]]) -> list[Lesson]:
    """Each failure→fix a passing run's record showed, once, as a lesson of its bundle."""
    lessons: dict[str, Lesson] = {}
    for e in steps_done:
        experience = recorded_experience(e)
        where = f"bundle {e['bundle']} (step {e.get('step')} “{e.get('step_title', '')}”)"
        for fix in experience.fixes if experience else []:
            if any(unsafe_command(c) for c in (fix.failed, fix.then) if c):
                continue  # a command that runs what it downloads is never a lesson
            lesson = Lesson("steps", str(e["bundle"]), one_line(f"In {where}: {fix.lesson()}"))
            lessons.setdefault(lesson.text, lesson)
    return list(lessons.values())


def _changes(steps_done: list[dict[str, Any]]) -> list[str]:
    lines = []
    for e in steps_done:
        experience = recorded_experience(e)
        if experience is not None and experience.changed:
            lines.append(
                f"- {e['bundle']} step {e.get('step')} (run {e.get('contract_id')}): "
                f"changed {listed(experience.changed)}"
            )
    return lines


def write(home: Home, retro: Retrospective) -> Path:
    path = home.retrospectives / f"retro-{retro.date}.md"
    n = 2
    while path.exists():
        path = home.retrospectives / f"retro-{retro.date}-{n}.md"
        n += 1
    atomic_write(path, retro.render())
    return path


@told
def hook_context(
    path: str, retro: Retrospective, ledger: WorkLedger, since: str
) -> PostRetroContext:
    """Hook E's context for the retrospective written at ``path``."""
    scopes = {lesson.scope for lesson in retro.lessons if not lesson.scope.startswith("_")}
    return PostRetroContext(
        retro_path=path,
        retro_type="weekly",
        related_bundle_slugs=sorted(scopes),
        harvest_run=f"{retro.date}-retro-weekly",
        experiences=run_experiences(ledger, since),
    )
