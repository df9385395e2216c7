"""A bundle's machine state, ``STEPS.json``: written atomically, so a kill never tears it;
beside it, ``PROGRESS_LOG.md`` is the human log of the same events.

A bundle folder is not the daemon's alone (a person edits it; a command worker may run in
it), so both files are read and appended without trust: only regular files, never through
a link or into a FIFO, ``STEPS.json`` bounded in size and nesting. A state file that does
not parse or validate raises :class:`StateError`, and the caller quarantines the bundle.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from executive.dates import now_iso, parse_instant
from executive.files import (
    JsonLimitError,
    append_regular,
    atomic_write,
    parse_json,
    read_regular,
)
from executive.redact import scrub
from executive.workspace.bundle import Priority, problems

STATE_FILE = "STEPS.json"
LOG_FILE = "PROGRESS_LOG.md"

# A thousand steps with ten kept errors each fit in well under a megabyte.
STATE_MAX_BYTES = 4 * 1024 * 1024


class StateError(ValueError):
    """``STEPS.json`` cannot be trusted: unreadable, not JSON, or not a bundle state."""


class StepState(BaseModel):
    number: int
    title: str
    status: Literal["pending", "in_progress", "done"] = "pending"
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
    # Hook D's last diagnosis of this step's failures (redacted, from its start).
    diagnosis: str = ""


class BundleState(BaseModel):
    slug: str
    title: str
    priority: Priority  # named, not any string: intake moves it into in-progress/<priority>
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
        until = parse_instant(step.retry_after)
        return until if until is not None and until > now else None

    def step(self, number: int) -> StepState:
        return next(s for s in self.steps if s.number == number)


def read_state(folder: Path, max_bytes: int = STATE_MAX_BYTES) -> BundleState | None:
    """The bundle's state, None when it has none yet, or :class:`StateError` saying why not."""
    path = folder / STATE_FILE
    try:
        raw = read_regular(path, max_bytes)
    except FileNotFoundError:
        return None
    except OSError as exc:  # UnsafeFile included: a link, a FIFO, too large
        raise StateError(f"{STATE_FILE}: {exc}") from None
    try:
        return BundleState.model_validate(parse_json(raw, max_bytes=max_bytes))
    except JsonLimitError as exc:
        raise StateError(f"{STATE_FILE}: {exc}") from None
    except ValidationError as exc:
        why = problems(exc, "state", most=5)
        raise StateError(f"{STATE_FILE} is not a bundle state: {why}") from None


def write_state(folder: Path, state: BundleState) -> None:
    # Errors in it are worker output: redacted here too, whatever the caller did.
    atomic_write(folder / STATE_FILE, scrub(state.model_dump_json(indent=2)) + "\n")


def log_progress(folder: Path, line: str) -> None:
    """Append a line; a link or FIFO planted as the log raises ``UnsafeFile``, never blocks."""
    append_regular(folder / LOG_FILE, f"- {now_iso()} {scrub(line)}\n")
