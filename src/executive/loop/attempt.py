"""An attempt at a step, as the step machine reads it: how far it came, and if it failed, why.
Data only: the machine decides on it without importing how a worker is run (loop/step.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names in annotations only: importing them would bring the worker's side
    from executive.spend import Spend
    from executive.workers.record import Experience
    from executive.workers.verifiers import VerifierResult


@dataclass
class Attempt:
    contract_id: str
    passed: bool
    error: str = ""
    fatal: bool = False  # retrying cannot help (a refused spawn, a missing executable)
    results: list[VerifierResult] = field(default_factory=list)
    duration_seconds: float = 0.0
    output_changed: bool = True
    log_path: Path | None = None
    experience: Experience | None = None  # what the worker did, from its record
    exited_clean: bool = False  # the worker exited 0 in time: its verifiers decide
    paid: bool = False  # a claude worker ran: its spend is counted (loop/budget.py)
    spend: Spend | None = None  # the CLI's own account of the run; None: not reported
    pack_tokens: int | None = None  # the memory pack's tokens: memory's share of its input
