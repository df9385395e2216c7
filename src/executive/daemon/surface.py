"""The full ``executive mem`` surface: reads and writes, durability tools, backfill.

One place assembles it, for the daemon's control socket and for the CLI when no daemon runs.
"""

from __future__ import annotations

from typing import Any

from executive.corpus import backfill
from executive.memory.maintenance import Maintenance
from executive.memory.runtime import MemoryRuntime
from executive.memory.surface import MemorySurface, SurfaceError, skipped_when_off
from executive.workspace.ledger import WorkLedger


def build_surface(runtime: MemoryRuntime) -> MemorySurface:
    surface = MemorySurface(runtime)
    Maintenance(runtime).register(surface)

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
