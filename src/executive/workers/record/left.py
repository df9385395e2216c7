"""What a worker left, read off the event loop: its folder before and after, then its run log.

A walk of a large folder must not hold the dashboard, the control socket or the watchdog, so
both looks and the reading run in a worker thread; how long they took goes into the run's
``worker.finished`` line.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from executive.spend import Spend, logged
from executive.workers import vendors
from executive.workers.record.experience import Experience
from executive.workers.record.reader import Snapshot, changes, read_run, snapshot


@dataclass
class Left:
    out: Path  # the worker's folder
    vendor: str
    log_path: Path
    command: str
    max_files: int
    skip: frozenset[str] = frozenset()  # names of the daemon's own, never the worker's change
    looks: list[Snapshot] = field(default_factory=list)
    experience: Experience | None = None
    spend: Spend | None = None

    async def before(self) -> None:
        self.looks.append(await anyio.to_thread.run_sync(self._walk))

    async def after(self, exit_code: int | None, timed_out: bool) -> dict[str, object]:
        self.looks.append(await anyio.to_thread.run_sync(self._walk))
        started = time.monotonic()
        self.experience, self.spend = await anyio.to_thread.run_sync(
            functools.partial(
                read_run,
                self.log_path,
                vendor=self.vendor,
                workdir=self.out,
                folder=changes(self.looks[0], self.looks[1], self.max_files),
                command=self.command,
                exit_code=None if timed_out else exit_code,
            )
        )
        return {
            "folder_files": len(self.looks[1].files),
            "folder_compared": self.looks[0].complete and self.looks[1].complete,
            "folder_seconds": round(self.looks[0].seconds + self.looks[1].seconds, 3),
            "record_seconds": round(time.monotonic() - started, 3),
            **logged(self.spend, paid=vendors.paid(self.vendor)),
        }

    def _walk(self) -> Snapshot:
        return snapshot(self.out, self.skip, self.max_files)

    @property
    def changed(self) -> bool:
        """Whether the output changed; unknown (a folder too large) counts as changed."""
        before, after = self.looks[0], self.looks[-1]
        return not (before.complete and after.complete) or before.files != after.files
