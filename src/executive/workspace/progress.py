"""What is happening to a bundle now, as its files say: the step running, its attempt and
since when; a wait counted from now; a cancel the operator asked for and the daemon has not
carried out yet. ``executive status`` and ``bundle list`` show them (a Claude step may run
45 minutes: the operator sees it run, not a silent queue)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from executive.dates import parse_instant
from executive.home import PRIORITIES, Home
from executive.workspace.operator import Located, cancel_pending, list_bundles
from executive.workspace.state import StepState


@dataclass(frozen=True)
class Running:
    slug: str
    priority: str
    step: int
    steps: int
    title: str
    attempt: int  # this attempt's number: the failed ones before it, plus one
    started_at: str
    seconds: int  # how long it has run, from its start to now
    cancel_pending: bool

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def running_step(found: Located) -> StepState | None:
    """The step that began and has not ended, in a bundle in progress; None otherwise."""
    if found.state is None or found.where not in PRIORITIES:
        return None
    return next((s for s in found.state.steps if s.status == "in_progress"), None)


def running(home: Home, now: datetime) -> list[Running]:
    """Every bundle with a step under way (one, while a daemon runs its loop)."""
    # Only the queues in progress: completed/ grows for ever and holds no running step.
    return [
        Running(
            slug=bundle.slug,
            priority=bundle.where,
            step=step.number,
            steps=len(bundle.state.steps),
            title=step.title,
            attempt=step.attempts + 1,
            started_at=step.started_at,
            seconds=elapsed_seconds(step.started_at, now) or 0,
            cancel_pending=cancel_pending(home, bundle.slug),
        )
        for bundle in list_bundles(home, PRIORITIES)
        if (step := running_step(bundle)) is not None and bundle.state is not None
    ]


def elapsed_seconds(since: str, now: datetime) -> int | None:
    """How long ago ``since`` was, in whole seconds (None when it is no time)."""
    started = parse_instant(since) if since else None
    return max(0, round((now - started).total_seconds())) if started is not None else None


def wait_seconds(retry_after: str, now: datetime) -> int:
    """How long a backing-off step still waits: 0 once its time has come (never a past time)."""
    until = parse_instant(retry_after) if retry_after else None
    return max(0, round((until - now).total_seconds())) if until is not None else 0


def duration(seconds: float) -> str:
    """``12s``, ``4m05s``, ``2h07m``: a person's reading of a span."""
    hours, rest = divmod(int(seconds), 3600)
    if hours:
        return f"{hours}h{rest // 60:02d}m"
    return f"{rest // 60}m{rest % 60:02d}s" if rest >= 60 else f"{rest}s"
