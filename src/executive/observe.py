"""What the daemon did lately, kept in memory for the dashboard, /metrics and /healthz.

The supervisor, the loop and the hook runner report into one :class:`Observer`, below every
layer so that any may report without importing upward. It reads no file and no store, and keeps
plain, bounded data (the last ``keep`` records of each kind, counters that never grow with
time), which the dashboard reads from the same event loop without locks.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from executive.dates import now_iso

# Hook durations in seconds: a built-in hook takes milliseconds, an LLM hook up to its limit.
DURATION_BUCKETS: tuple[float, ...] = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    120.0,
    float("inf"),
)


class _Result(Protocol):
    """The parts of a ``HookResult`` the observer reads (it may not import hooks)."""

    hook: str
    engine: str | None
    duration_ms: int
    error: str | None
    reason: str | None
    memory_pack: str | None
    details: dict[str, Any]
    writes: Any

    @property
    def outcome(self) -> str: ...

    @property
    def histogram(self) -> dict[str, int]: ...

    @property
    def tail(self) -> str: ...


# How long past its limit a worker's kill may take before the wait is no longer progress.
_KILL_SECONDS = 60.0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Iteration:
    number: int
    pace: str
    duration_ms: int
    finished_at: str


@dataclass(frozen=True)
class Failure:
    """The last iteration that raised: its number, its error (one line, redacted), when."""

    number: int
    error: str
    at: str


@dataclass(frozen=True)
class Component:
    """A part of the daemon besides the loop (the dashboard): up, or failed and why."""

    ok: bool
    detail: str
    since: str


@dataclass(frozen=True)
class HookRun:
    id: int
    at: str
    hook: str
    engine: str
    outcome: str
    duration_ms: int
    tools: dict[str, int]
    writes: dict[str, int]
    tail: str
    error: str | None
    bundle: str | None
    step: int | None


@dataclass(frozen=True)
class Pack:
    """The pack one spawn got, beside the reader's trace of how it was found."""

    contract_id: str
    at: str
    bundle: str
    step: int
    step_title: str
    attempt: int
    outcome: str
    markdown: str
    tokens: int
    entries: int
    cut: int
    trace: dict[str, Any]
    error: str | None


@dataclass
class Histogram:
    buckets: list[int] = field(default_factory=lambda: [0] * len(DURATION_BUCKETS))
    total: float = 0.0
    count: int = 0

    def observe(self, seconds: float) -> None:
        for i, bound in enumerate(DURATION_BUCKETS):
            if seconds <= bound:
                self.buckets[i] += 1
        self.total += seconds
        self.count += 1


class Observer:
    def __init__(self, keep: int = 500) -> None:
        self.started_monotonic = time.monotonic()
        self.started_at = now_iso()
        self.iterations: deque[Iteration] = deque(maxlen=keep)
        self.hook_runs: deque[HookRun] = deque(maxlen=keep)
        self.packs: deque[Pack] = deque(maxlen=keep)
        self.iteration_counts: Counter[str] = Counter()
        self.hook_counts: Counter[tuple[str, str]] = Counter()
        self.hook_durations: dict[str, Histogram] = {}
        self.write_counts: Counter[str] = Counter()
        self.worker_counts: Counter[str] = Counter()
        self.pack_tokens = Histogram()
        self.pack_entries = Histogram()
        self.last_tick: float | None = None
        self.in_flight: tuple[int, float] | None = None
        # Progress beside the ticks: the heartbeat's last beat while a worker ran within its
        # limit, and that worker's (start, limit in seconds).
        self.last_progress: float | None = None
        self.worker_running: tuple[float, float] | None = None
        self.stopping = False
        # Iterations that raised, in a row: a good one sets it back to zero.
        self.failed_in_a_row = 0
        self.last_failure: Failure | None = None
        self.components: dict[str, Component] = {}
        self._next_id = 0

    # --- the supervisor ---------------------------------------------------------------------
    def iteration_started(self, number: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.in_flight = (number, now)
        self.last_tick = now

    def iteration_finished(
        self, number: int, pace: str, duration_ms: int, error: str | None = None
    ) -> None:
        """``error`` is set when the iteration raised (its pace is then ``failed``)."""
        self.iterations.append(Iteration(number, pace, duration_ms, _now()))
        self.iteration_counts[pace] += 1
        self.in_flight = None
        self.last_tick = time.monotonic()
        if error is None:
            self.failed_in_a_row = 0
        else:
            self.failed_in_a_row += 1
            self.last_failure = Failure(number, error, _now())

    @contextmanager
    def waiting_on_worker(self, limit_seconds: float, now: float | None = None) -> Iterator[None]:
        """While the loop awaits a worker that has ``limit_seconds`` to finish."""
        self.worker_running = (time.monotonic() if now is None else now, limit_seconds)
        try:
            yield
        finally:
            self.worker_running = None

    def alive(self, now: float | None = None) -> None:
        """The supervisor's heartbeat: its event loop still runs. A beat counts as progress
        while the loop awaits a worker within its limit (a Claude step may run 45 minutes)."""
        now = time.monotonic() if now is None else now
        running = self.worker_running
        if running is not None and now - running[0] <= running[1] + _KILL_SECONDS:
            self.last_progress = now

    def seconds_without_progress(self, now: float | None = None) -> float:
        """Seconds since an iteration started or ended, or a heartbeat found a worker in time."""
        now = time.monotonic() if now is None else now
        marks = [m for m in (self.last_tick, self.last_progress) if m is not None]
        return now - max(marks) if marks else now - self.started_monotonic

    def failing(self, after: int) -> str | None:
        """Why the loop is unhealthy when its last ``after`` iterations (or more) all raised;
        None while fewer did: one may be passing (a full disk, a store restart)."""
        last = self.last_failure
        if self.failed_in_a_row < after or last is None:
            return None
        return (
            f"failing: the last {self.failed_in_a_row} iterations failed "
            f"(unhealthy from {after} in a row); iteration {last.number} at {last.at}: {last.error}"
        )

    def component(self, name: str, ok: bool, detail: str) -> None:
        """A component came up (``ok``) or failed; the time of the change is kept."""
        known = self.components.get(name)
        since = known.since if known is not None and known.ok == ok else _now()
        self.components[name] = Component(ok, detail, since)

    def degraded(self) -> dict[str, str]:
        """The components that failed, with why: the daemon works, but without them."""
        return {name: c.detail for name, c in sorted(self.components.items()) if not c.ok}

    # --- the hook runner --------------------------------------------------------------------
    def hook_finished(self, result: _Result, context: object | None = None) -> None:
        outcome = result.outcome
        self.hook_counts[(result.hook, outcome)] += 1
        if outcome == "skipped":
            # Gated runs happen every iteration a hook is off: counted, not listed.
            return
        self.hook_durations.setdefault(result.hook, Histogram()).observe(result.duration_ms / 1000)
        writes = result.writes.model_dump() if hasattr(result.writes, "model_dump") else {}
        for name in ("succeeded", "skipped", "failed"):
            self.write_counts[name] += int(writes.get(name, 0))
        item = getattr(context, "work_item", None)
        step = getattr(context, "current_step", None)
        self._next_id += 1
        self.hook_runs.append(
            HookRun(
                id=self._next_id,
                at=_now(),
                hook=result.hook,
                engine=result.engine or "",
                outcome=outcome,
                duration_ms=result.duration_ms,
                tools=result.histogram,
                writes={k: int(v) for k, v in writes.items()},
                tail=result.tail,
                error=result.error,
                bundle=getattr(item, "bundle_slug", None),
                step=getattr(step, "number", None),
            )
        )

    # --- the loop ---------------------------------------------------------------------------
    def spawned(
        self,
        *,
        contract_id: str,
        bundle: str,
        step: int,
        step_title: str,
        attempt: int,
        result: _Result | None,
    ) -> None:
        """Hook B's answer for one spawn (``None``: the hook could not even be asked)."""
        details = result.details if result is not None else {}
        ok = result is not None and result.outcome == "ok"
        pack = Pack(
            contract_id=contract_id,
            at=_now(),
            bundle=bundle,
            step=step,
            step_title=step_title,
            attempt=attempt,
            outcome=result.outcome if result is not None else "failed",
            markdown=(result.memory_pack or "") if ok and result is not None else "",
            tokens=int(details.get("tokens", 0) or 0),
            entries=int(details.get("entries", 0) or 0),
            cut=int(details.get("cut", 0) or 0),
            trace=dict(details.get("trace") or {}),
            error=(result.error or result.reason) if result is not None else "no context",
        )
        self.packs.append(pack)
        if ok:
            self.pack_tokens.observe(pack.tokens)
            self.pack_entries.observe(pack.entries)

    def worker_finished(self, outcome: str) -> None:
        self.worker_counts[outcome] += 1

    # --- readers ----------------------------------------------------------------------------
    def pack(self, contract_id: str) -> Pack | None:
        return next((p for p in reversed(self.packs) if p.contract_id == contract_id), None)

    @property
    def uptime_seconds(self) -> float:
        return time.monotonic() - self.started_monotonic
