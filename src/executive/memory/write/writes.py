"""What a harvest returns, and the gate that keeps maintenance jobs apart from writes.

Split from the harvester so the one writer stays one screenful of policy.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from executive.memory.write import ledger as L


@dataclass
class WriteResult:
    ok: bool
    status: str
    key: str | None
    memory_id: str | None = None
    event_id: str | None = None
    ms: int = 0
    error: str | None = None
    type: str | None = None
    app_id: str | None = None
    source: str | None = None
    harvest_run: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class HarvestSummary:
    results: list[WriteResult] = field(default_factory=list)

    @property
    def succeeded(self) -> int:
        return sum(1 for r in self.results if r.ok and r.status == L.SUCCEEDED)

    @property
    def skipped(self) -> int:
        return sum(1 for r in self.results if r.ok and r.status != L.SUCCEEDED)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not r.ok)

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "total": len(self.results),
            "succeeded": self.succeeded,
            "skipped": self.skipped,
            "failed": self.failed,
            "results": [r.as_dict() for r in self.results],
        }


class Gate:
    """Many writes at once, or one maintenance job (rebuild, restore, drift fix) alone."""

    def __init__(self) -> None:
        self._condition = anyio.Condition()
        self._writers = 0
        self._exclusive = False

    @asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        async with self._condition:
            while self._exclusive:
                await self._condition.wait()
            self._writers += 1
        try:
            yield
        finally:
            async with self._condition:
                self._writers -= 1
                self._condition.notify_all()

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        async with self._condition:
            while self._exclusive or self._writers:
                await self._condition.wait()
            self._exclusive = True
        try:
            yield
        finally:
            async with self._condition:
                self._exclusive = False
                self._condition.notify_all()
