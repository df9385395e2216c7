"""A bundle's machine state, ``STEPS.json``: written atomically, so a kill never tears it.

Beside it, ``PROGRESS_LOG.md`` is the human log of the same events.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from executive.files import atomic_write
from executive.redact import scrub

STATE_FILE = "STEPS.json"
LOG_FILE = "PROGRESS_LOG.md"

StepStatus = Literal["pending", "in_progress", "done"]


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


class StepState(BaseModel):
    number: int
    title: str
    status: StepStatus = "pending"
    attempts: int = 0  # failed attempts so far
    last_error: str = ""
    errors: list[str] = Field(default_factory=list)
    contract_id: str = ""
    started_at: str = ""
    finished_at: str = ""
    duration_seconds: float = 0.0
    estimated_seconds: float | None = None
    # After a failure: not before this instant (ISO, UTC). Empty: no wait.
    retry_after: str = ""
    # Hook D's last diagnosis of this step's failures (redacted, tail only).
    diagnosis: str = ""


class BundleState(BaseModel):
    slug: str
    title: str
    priority: str
    status: Literal["active", "completed", "blocked"] = "active"
    queued_at: str = Field(default_factory=now_iso)
    started_at: str = ""
    finished_at: str = ""
    steps: list[StepState]

    def next_step(self) -> StepState | None:
        """Depth-first: the first step not done."""
        return next((s for s in self.steps if s.status != "done"), None)

    def waiting_until(self, now: datetime) -> datetime | None:
        """When the next step may run again after a failure; None when it may run now."""
        step = self.next_step()
        if step is None or not step.retry_after:
            return None
        until = datetime.fromisoformat(step.retry_after)
        return until if until > now else None

    def step(self, number: int) -> StepState:
        return next(s for s in self.steps if s.number == number)


def read_state(folder: Path) -> BundleState | None:
    path = folder / STATE_FILE
    try:
        return BundleState.model_validate(json.loads(path.read_text()))
    except FileNotFoundError:
        return None


def write_state(folder: Path, state: BundleState) -> None:
    # Errors in it are worker output: redacted here too, whatever the caller did.
    atomic_write(folder / STATE_FILE, scrub(state.model_dump_json(indent=2)) + "\n")


def log_progress(folder: Path, line: str) -> None:
    path = folder / LOG_FILE
    with path.open("a") as handle:
        handle.write(f"- {now_iso()} {scrub(line)}\n")


def backoff_seconds(attempts: int, floor: float, ceiling: float) -> float:
    """The wait after ``attempts`` failures: ``floor`` doubled per failure after the first."""
    if attempts < 1 or floor <= 0:
        return 0.0
    return min(max(ceiling, floor), floor * 2 ** min(attempts - 1, 32))
