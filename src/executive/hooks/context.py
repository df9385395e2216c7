"""What each hook is told: the fields of the original's contexts, as models. The loop builds
these; a person can write one as JSON for ``executive hooks run``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from executive.workers.record import Experience

MAX_RUN_EXPERIENCES = 20


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WorkItem(_Model):
    id: str
    title: str
    description: str = ""
    priority: str = "P3"
    bundle_slug: str
    app_id: str
    output_path: str = ""
    source: str = ""  # repository path of the bundle's PROMPT.md


class Step(_Model):
    number: int
    title: str
    estimated_seconds: float | None = None


class VerifierReport(_Model):
    verifier: str
    result: Literal["PASS", "FAIL"]
    message: str = ""
    evidence: str = ""


class ValidationReport(_Model):
    passed: bool
    verifiers: list[VerifierReport] = Field(default_factory=list)


class PriorAttempt(_Model):
    run_id: str
    attempt: int
    error: str = ""
    signal: str = ""
    at: str = ""
    experience: Experience | None = None  # what it tried (the ledger's brief digest)


class RunExperience(_Model):
    """One step outcome of a retrospective's period, with what the worker did."""

    bundle_slug: str
    step: int
    contract_id: str = ""
    outcome: Literal["passed", "failed"]
    experience: Experience


class FailureSignals(_Model):
    attempts: int
    last_error: str = ""
    signal: str = ""
    output_path: str = ""


class Outcome(_Model):
    bundle_slug: str
    title: str = ""
    result: Literal["success", "failure", "blocked"]
    run_id: str = ""
    at: str = ""


class PreWorkContext(_Model):
    """A: before work selection, with at least one bundle queued."""

    queued: list[WorkItem]
    picked: str | None = None  # the bundle the executive picked, by priority and age
    recent_failures: list[Outcome] = Field(default_factory=list)
    recent_successes: list[Outcome] = Field(default_factory=list)
    idle_seconds: float = 0.0


class PreSpawnContext(_Model):
    """B: before every spawn."""

    work_item: WorkItem
    current_step: Step
    execution_pattern: str = "standard"
    vendor: str
    retry_attempt: int = 1
    last_error: str = ""


class PostRunContext(_Model):
    """C: after a successful run, once state is updated."""

    work_item: WorkItem
    current_step: Step
    vendor: str
    validation_report: ValidationReport
    harvest_run: str
    attempts: int = 1
    prior_errors: list[str] = Field(default_factory=list)
    run_started_at: str = ""
    run_ended_at: str = ""
    duration_seconds: float = 0.0
    contract_id: str = ""
    output_changed: bool = True
    experience: Experience | None = None  # what the worker did, read from its record


class FailDiagContext(_Model):
    """D: on a failure from the third attempt on."""

    work_item: WorkItem
    current_step: Step
    vendor: str
    failure_signals: FailureSignals
    prior_attempts: list[PriorAttempt] = Field(default_factory=list)
    harvest_run: str
    max_retries: int = 10
    experience: Experience | None = None  # what this failing attempt did


class PostRetroContext(_Model):
    """E: after a retrospective was written."""

    retro_path: str  # relative to the agent home
    retro_type: Literal["weekly", "per-run"] = "weekly"
    related_bundle_slugs: list[str] = Field(default_factory=list)
    harvest_run: str
    # What the period's runs did (the work ledger's brief digests), the latest last.
    experiences: list[RunExperience] = Field(default_factory=list, max_length=MAX_RUN_EXPERIENCES)


HookContext = PreWorkContext | PreSpawnContext | PostRunContext | FailDiagContext | PostRetroContext
