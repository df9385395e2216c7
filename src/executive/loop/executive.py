"""The executive that the supervisor runs, one iteration at a time."""

from __future__ import annotations

from executive.home import Home
from executive.logs import get_logger
from executive.loop.pace import Pace
from executive.memory.runtime import MemoryRuntime
from executive.settings import Settings

log = get_logger(__name__)


class Executive:
    def __init__(self, settings: Settings, memory: MemoryRuntime) -> None:
        self._settings = settings
        self._home = Home(settings.home)
        self._memory = memory

    async def start(self) -> None:
        self._home.ensure()

    async def iterate(self, number: int) -> Pace:
        queued = sorted(p.name for p in self._home.ondeck.iterdir() if p.is_dir())
        log.info("queue.seen", ondeck=len(queued), bundles=queued[:10])
        return Pace.IDLE

    async def close(self) -> None:
        await self._memory.close()
