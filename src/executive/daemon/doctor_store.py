"""``executive doctor``'s store checks: the Postgres server, and the store itself.

Both tell the store's health as every other surface does (:mod:`executive.memory.health`: a
cause, and the fix for its kind), and each answers within seconds: the Postgres connection
and the pool's wait are bounded.
"""

from __future__ import annotations

from typing import Any

import anyio

from executive.daemon.doctor_check import Check
from executive.daemon.status import memory_counts
from executive.home import Home
from executive.memory import health as store_health
from executive.memory.runtime import MemoryRuntime
from executive.memory.store import CAPABILITIES, Filter, missing
from executive.settings import Settings
from executive.surface.control import RemoteSurface, daemon_listening
from executive.surface.operations import SurfaceError


def postgres(settings: Settings) -> list[Check]:
    """The Postgres store's server: reachable, pgvector 0.8.0 or later (iterative scans)."""
    found = store_health.database(settings)
    return [] if found is None else [Check("postgres", found.ok, found.detail, found.fix)]


def store(settings: Settings) -> list[Check]:
    """Open the store (or ask its daemon), count memories against the ledgers, load the embedder."""
    if not settings.surface_memory_on:
        return [Check("memory store", True, "not checked: V3_MEMORY_ENABLED=false")]
    home = Home(settings.home)
    if daemon_listening(home.socket):
        return [_via_daemon(home)]
    # Before opening: opening the embedded store makes its folder again, empty.
    lost = store_health.folder_lost(settings, home.store_dir, MemoryRuntime(settings).ledger)
    if lost is not None:
        return [Check("memory store", False, lost.detail, lost.fix)]
    try:
        health, counts = anyio.run(_open_and_count, settings)
    except Exception as exc:
        return [
            Check(
                "memory store",
                False,
                f"cannot open the {settings.store_backend} store: {store_health.describe(exc)}",
                "see the error above; executive --home HOME mem rebuild rebuilds the store "
                "from the harvest ledgers once it opens",
            )
        ]
    if not health.ok:
        return [Check("memory store", False, health.detail, health.fix)]
    assert counts is not None  # a store that answered was counted
    return [Check("memory store", True, _counts(counts)), _powers(counts["lacks"])]


def _powers(lacks: list[Any]) -> Check:
    """The store's optional powers (``memory/store/base.py``), and what a pack loses without one."""
    if not lacks:
        return Check("store powers", True, f"all: {', '.join(c.name for c in CAPABILITIES)}")
    return Check("store powers", True, "; ".join(f"no {c.name}: {c.without}" for c in lacks))


def _via_daemon(home: Home) -> Check:
    name = "memory store (via the daemon)"
    try:
        report = anyio.run(RemoteSurface(home.socket).call, "status")
    except SurfaceError as exc:
        return Check(
            "memory store",
            False,
            f"the running daemon did not answer: {exc}",
            "see the daemon's log (`executive status` says whether it runs); restart it "
            "if it hangs",
        )
    info = report.get("store", {})
    found = info.get("health")
    if isinstance(found, dict) and not found.get("ok"):
        return Check(name, False, str(found["detail"]), str(found["fix"]))
    if "total" not in info:
        detail = info.get("error") or "the daemon has not opened it (memory hooks off)"
        fix = "" if "error" not in info else "see the daemon's log; executive --home HOME doctor"
        return Check(name, "error" not in info, detail, fix)
    return Check(name, True, _counts(info))


async def _open_and_count(
    settings: Settings,
) -> tuple[store_health.StoreHealth, dict[str, Any] | None]:
    runtime = MemoryRuntime(settings)
    try:
        view = await runtime.view()
        # First the bounded count: a server that is down is told in seconds.
        health = await store_health.check(settings, view, runtime.ledger)
        if health.state in ("down", "error"):
            return health, None
        # A search embeds a question: the embedding model is loaded and run, not only found.
        await view.search("doctor: is the embedder working?", Filter(user_id=settings.user_id), 1)
        counts = {"backend": settings.store_backend, **await memory_counts(view, settings.user_id)}
        counts["lacks"] = missing(await runtime.store())
        return health, counts
    finally:
        await runtime.close()


def _counts(store: dict[str, Any]) -> str:
    kinds = ", ".join(f"{n} {kind}" for kind, n in store["by_type"].items())
    return f"{store['backend']} store opened, embedder loaded: {store['total']} memories ({kinds})"
