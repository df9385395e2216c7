"""The full ``executive mem`` surface: reads and writes, durability tools, backfill."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from executive.corpus import backfill
from executive.home import Home
from executive.memory.runtime import MemoryRuntime
from executive.settings import Settings
from executive.surface.control import RemoteSurface, daemon_listening
from executive.surface.maintenance import Maintenance
from executive.surface.operations import MemorySurface, SurfaceError, skipped_when_off
from executive.workspace.ledger import WorkLedger


def build_surface(runtime: MemoryRuntime) -> MemorySurface:
    """The surface the daemon's control socket serves, and the CLI's when no daemon runs."""
    surface = MemorySurface(runtime)
    maintenance = Maintenance(runtime)
    for name in ("snapshot", "restore", "drift", "purge", "replay"):
        surface.register(name, getattr(maintenance, name))
    surface.register("rebuild", lambda: maintenance.rebuild())  # no progress callback over JSON

    async def run_backfill(lanes: list[str] | None = None, dry_run: bool = False) -> dict[str, Any]:
        if not dry_run and (off := skipped_when_off(runtime.settings)) is not None:
            return off
        try:
            return await backfill.run(
                await runtime.harvester(),
                await runtime.view(),
                runtime.home,
                WorkLedger(runtime.home.work_ledger),
                lanes=lanes or backfill.LANES,
                dry_run=dry_run,
                spec_files=runtime.settings.spec_file_list,
            )
        except ValueError as exc:
            raise SurfaceError(str(exc)) from exc

    surface.register("backfill", run_backfill)
    return surface


@asynccontextmanager
async def open_surface(settings: Settings) -> AsyncIterator[MemorySurface | RemoteSurface]:
    """The running daemon's surface when there is one, else the store opened here."""
    socket_path = Home(settings.home).socket
    if daemon_listening(socket_path):
        yield RemoteSurface(socket_path)
        return
    runtime = MemoryRuntime(settings)
    surface = build_surface(runtime)
    try:
        yield surface
    finally:
        with anyio.CancelScope(shield=True):
            await runtime.close()
