"""``/healthz``: is the loop ticking and succeeding, and does the store answer (when memory is on)?

The store's part is :mod:`executive.memory.health`'s answer, the one ``status`` and
``doctor`` give: a store that does not answer makes the daemon unhealthy (503, with the cause
and the fix); one that answers but holds fewer memories than the ledgers confirm makes it
degraded (200: the loop works, its packs are poorer). From
``EXECUTIVE_UNHEALTHY_AFTER_FAILURES`` failed iterations in a row the loop is unhealthy too.

The loop ticks when an iteration starts and when it ends. Between iterations it waits at most
the idle interval, so a tick older than twice that interval means it is stuck. An iteration in
flight may legitimately last as long as one worker run plus its hooks; past that bound it is
stalled too (a bundle with a longer own ``timeout_seconds`` reads as stalled past the global
bound: the probe cannot know every bundle's limit).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import anyio

from executive.memory.health import StoreHealth
from executive.memory.health import check as store_check
from executive.memory.runtime import MemoryRuntime
from executive.observe import Observer
from executive.settings import Settings
from executive.workspace import spending

# Hooks an iteration may run around its one worker (A, B, then C or D).
_HOOKS_PER_ITERATION = 3


@dataclass(frozen=True)
class Health:
    ok: bool
    loop: str
    store: str
    degraded: dict[str, str] = field(default_factory=dict)  # failed parts; the loop works
    budget: str | None = None  # "paused: daily budget ..." while the day's cap holds paid runs

    def as_dict(self) -> dict[str, object]:
        status = "unhealthy" if not self.ok else "degraded" if self.degraded else "ok"
        return {
            "status": status,
            "loop": self.loop,
            "store": self.store,
            **({"degraded": self.degraded} if self.degraded else {}),
            **({"budget": self.budget} if self.budget else {}),
        }


def loop_state(
    settings: Settings, observer: Observer, now: float | None = None
) -> tuple[bool, str]:
    now = time.monotonic() if now is None else now
    window = 2 * settings.idle_sleep_seconds
    if observer.stopping:
        return False, "stopping"
    if observer.last_tick is None:
        return False, "no iteration has started yet"
    if (failing := observer.failing(settings.unhealthy_after_failures)) is not None:
        return False, failing
    if observer.in_flight is not None:
        number, since = observer.in_flight
        bound = (
            settings.worker_timeout_ms / 1000
            + _HOOKS_PER_ITERATION * settings.hook_timeout_seconds
            + window
        )
        age = now - since
        if age > bound:
            return False, f"stalled: iteration {number} running for {age:.0f}s (bound {bound:.0f}s)"
        return True, f"busy: iteration {number} running for {age:.0f}s"
    age = now - observer.last_tick
    if age > window:
        return False, f"stalled: no tick for {age:.0f}s (window {window:g}s)"
    return True, f"ticking: last tick {age:.1f}s ago"


async def store_health(settings: Settings, runtime: MemoryRuntime) -> StoreHealth | None:
    """None when not asked: memory off, or the store not opened yet (opening loads the
    embedding model: a probe must not be what pays for that)."""
    if not settings.hooks_master_on or not runtime.opened:
        return None
    return await store_check(settings, await runtime.view(), runtime.ledger)


async def store_state(settings: Settings, runtime: MemoryRuntime) -> tuple[bool, str, str]:
    """Whether the store lets the daemon be healthy, what it says, and a shortfall's text
    (a store that answers but lacks memories: degraded, the loop works)."""
    if not settings.hooks_master_on:
        return True, "memory off", ""
    if (found := await store_health(settings, runtime)) is None:
        return True, "not opened yet (opens on first use)", ""
    if found.state in ("down", "error"):
        return False, f"{found.detail}; fix: {found.fix}", ""
    if found.state == "short":
        return True, found.detail, f"{found.detail}; fix: {found.fix}"
    return True, found.detail, ""


async def check(settings: Settings, observer: Observer, runtime: MemoryRuntime) -> Health:
    loop_ok, loop = loop_state(settings, observer)
    store_ok, store, short = await store_state(settings, runtime)
    degraded = observer.degraded() | ({"store": short} if short else {})
    # A paused day is healthy (the cap does its work), and said: paid work waits until then.
    pause = await anyio.to_thread.run_sync(spending.budget_of(settings).paused)
    said = pause.describe() if pause is not None else None
    return Health(loop_ok and store_ok, loop, store, degraded, said)
