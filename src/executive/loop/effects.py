"""What the step machine asks the executive to do, data only: :func:`executive.loop.machine.advance`
returns these effects, the executive carries each out and feeds back the event it produced
(each docstring says which). Records change the bundle's files and the ledger; the others run
something (a hook, the worker, its route, its verifiers) or tell the observer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from executive.hooks.result import HookResult
from executive.hookspecs import HookName
from executive.loop import transitions
from executive.loop.attempt import Attempt


@dataclass(frozen=True)
class Record:
    """Record ``transition`` (state file, work ledger, log line, PROGRESS log: see
    :mod:`executive.loop.transitions`); the effects below are carried out the same way."""

    transition: transitions.Transition


@dataclass(frozen=True)
class BackOff(Record):
    """The step waits until ``until`` before it runs again."""

    until: datetime
    seconds: float


@dataclass(frozen=True)
class BlockGoal(Record):
    """The goal is blocked: the needs-you entry carries the reason and Hook D's diagnosis."""

    reason: str
    diagnosis: str


@dataclass(frozen=True)
class RunHook:
    """Run ``hook`` with its context, built from the step's state; answer ``HookAnswered``."""

    hook: HookName


@dataclass(frozen=True)
class Prepare:
    """Make the worker's folder, CLAUDE.md (with ``pack``), environment and command line;
    answer ``WorkerPrepared``, or ``WorkerFinished`` with the attempt that could not start."""

    pack: str | None
    packed: HookResult | None  # Hook B's whole answer, for the observer


@dataclass(frozen=True)
class Route:
    """Open the worker's egress route; answer ``RouteOpened``, or ``WorkerFinished``."""


@dataclass(frozen=True)
class Spawn:
    """Run the prepared worker; answer ``WorkerFinished``."""

    pack: str | None  # its tokens are memory's share of the run's input


@dataclass(frozen=True)
class Verify:
    """Run the verifiers on the worker's output; answer ``Verified``."""

    attempt: Attempt


@dataclass(frozen=True)
class ReportOutcome:
    """Tell the observer how the worker's attempt ended."""

    outcome: Literal["passed", "failed", "fatal"]


Effect = Record | BackOff | BlockGoal | RunHook | Prepare | Route | Spawn | Verify | ReportOutcome
