"""``executive status`` answered by the running daemon: what it runs with, not what the file says.

The daemon reads ``.env.executive`` once, at start. After an edit without a restart the file
and the process disagree, and only the process knows what it is doing; so the daemon answers
over its control socket, with where each flag's value came from and whether the file has
changed since it started.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from executive.daemon.status import fingerprint, gather, hook_states, memory_counts, with_store
from executive.home import Home
from executive.logs import get_logger
from executive.memory import health as store_health
from executive.memory.runtime import MemoryRuntime
from executive.memory.store import StoreError
from executive.settings import value_sources

if TYPE_CHECKING:
    from executive.daemon.supervisor import Supervisor

log = get_logger(__name__)


class LiveStatus:
    def __init__(self, runtime: MemoryRuntime) -> None:
        self._runtime = runtime
        self._env_file = Home(runtime.settings.home).env_file
        # Taken when the settings were read, so a later edit shows as "restart needed".
        self._sources = value_sources(self._env_file)
        self._fingerprint = fingerprint(self._env_file)
        self.supervisor: Supervisor | None = None

    async def __call__(self) -> dict[str, Any]:
        settings = self._runtime.settings
        # The files' view folds the whole harvest ledger (pending writes): not on the loop.
        report = await anyio.to_thread.run_sync(gather, settings)
        process = self.supervisor.snapshot() if self.supervisor else {}
        changed = fingerprint(self._env_file) != self._fingerprint
        report["source"] = "daemon"
        report["daemon"] = {
            "running": True,
            **process,
            "config_changed": changed,
            "restart_needed": changed,
        }
        report["hooks"] = hook_states(settings, self._sources)
        report["recent_iterations"] = process.get("recent_iterations", [])
        report["next_jobs"] = process.get("jobs", {})
        report["store"] = await self._store()
        report["health"] = with_store(process.get("health"), report["store"].get("health"))
        return report

    async def _store(self) -> dict[str, Any]:
        runtime = self._runtime
        info: dict[str, Any] = {
            "backend": runtime.settings.store_backend,
            "opened": runtime.opened,
        }
        if not runtime.opened:
            return info
        view = await runtime.view()
        found = await store_health.check(runtime.settings, view, runtime.ledger)
        info["health"] = found.as_dict()
        if found.state in ("down", "error"):
            # Counting by type would wait on the same silent server again.
            log.warning("status.store_failed", error=found.detail)
            info["error"] = found.detail
            return info
        try:
            info |= await memory_counts(view, runtime.settings.user_id)
        except StoreError as exc:
            log.warning("status.store_failed", error=str(exc))
            info["error"] = str(exc)
        return info
