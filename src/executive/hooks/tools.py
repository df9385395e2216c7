"""The memory tools a hook run may use, recording every call for the tool-call histogram. A
read hook gets the reader's door only, a write hook the harvester's too. Nothing opens the
store until a tool is first used: a gated-off hook never touches it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from executive.hookspecs import HookSpec
from executive.memory.read import Reader
from executive.memory.runtime import MemoryRuntime
from executive.memory.store import Filter, MemoryRecord, ReadView, StoreError, Words
from executive.memory.taxonomy import MAX_FILES, MemoryType
from executive.memory.write import HarvestSummary
from executive.settings import Settings


class RecordingView:
    """A read view that names each call it passes on (``memory.search`` ...)."""

    def __init__(self, view: ReadView, calls: list[str]) -> None:
        self._view = view
        self._calls = calls

    async def search(self, query: str, where: Filter, top_k: int) -> list[MemoryRecord]:
        self._calls.append("memory.search")
        return await self._view.search(query, where, top_k)

    async def get(self, memory_id: str) -> MemoryRecord | None:
        self._calls.append("memory.get")
        return await self._view.get(memory_id)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        self._calls.append("memory.history")
        return await self._view.history(memory_id)

    async def list(self, where: Filter | None = None) -> list[MemoryRecord]:
        self._calls.append("memory.list")
        return await self._view.list(where)

    async def count(self, where: Filter | None = None) -> int:
        self._calls.append("memory.count")
        return await self._view.count(where)

    async def revision(self) -> int | None:
        return await self._view.revision()  # bookkeeping, not a memory tool call

    async def search_scopes(
        self, query: str, wheres: Sequence[Filter], top_k: int
    ) -> list[list[MemoryRecord]]:
        self._calls.append("memory.search")  # one question of several scopes: one search
        return await self._view.search_scopes(query, wheres, top_k)

    async def prepare(self, queries: Sequence[str]) -> None:
        await self._view.prepare(queries)  # the questions' embeddings, not a tool call

    async def words(self, wheres: Sequence[Filter], floor: float, now: datetime) -> Words | None:
        self._calls.append("memory.words")
        return await self._view.words(wheres, floor, now)


class HookTools:
    def __init__(self, memory: MemoryRuntime, spec: HookSpec, calls: list[str]) -> None:
        self.memory = memory
        self.spec = spec
        self.calls = calls
        self.summaries: list[HarvestSummary] = []

    @property
    def settings(self) -> Settings:
        return self.memory.settings

    @property
    def user_id(self) -> str:
        user = self.settings.user_id
        if not user:
            raise StoreError("V3_MEM0_USER_ID is not set: memory hooks cannot scope their reads")
        return user

    async def view(self) -> RecordingView:
        return RecordingView(await self.memory.view(), self.calls)

    async def reader(self) -> Reader:
        return Reader(await self.view(), user_id=self.user_id, floor=self.settings.confidence_floor)

    def _writer(self) -> None:
        if not self.spec.writes:
            raise PermissionError(f"hook {self.spec.name} is read-only")

    async def add(self, items: Sequence[dict[str, Any]]) -> HarvestSummary:
        """Write through the harvester (write hooks only). Rejections raise."""
        self._writer()
        self.calls.append("memory.add")
        harvester = await self.memory.harvester()
        summary = await harvester.add(items, actor=f"hook:{self.spec.name}")
        self.summaries.append(summary)
        return summary

    async def mark_outdated(self, app_id: str, changed: Sequence[str], run_id: str) -> int:
        """Mark the project's memories about a file ``run_id`` changed possibly outdated, through
        the harvester (so the ledger and a rebuild keep it), never deleting one; what this run
        wrote or found said again (a duplicate) is current. Returns how many were marked."""
        self._writer()
        if not changed:
            return 0
        view = await self.view()
        confirmed = {r.memory_id for s in self.summaries for r in s.results if r.memory_id}
        found: dict[str, tuple[MemoryRecord, set[str]]] = {}
        for path in list(dict.fromkeys(changed))[:MAX_FILES]:
            about = await view.list(
                Filter(user_id=self.user_id, app_ids=(app_id,), metadata=(("files", path),))
            )
            for record in about:
                current = record.run_id == run_id or record.id in confirmed
                if not current and record.type != MemoryType.PRINCIPLE:
                    found.setdefault(record.id, (record, set()))[1].add(path)
        harvester = await self.memory.harvester()
        for record, paths in found.values():
            known = record.metadata.get("outdated_files") or []
            self.calls.append("memory.update")
            await harvester.update(
                record.id,
                metadata={
                    "outdated_files": sorted({*known, *paths})[:MAX_FILES],
                    "outdated_by": run_id,
                },
                actor=f"hook:{self.spec.name}",
            )
        return len(found)
