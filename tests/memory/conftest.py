"""Real embedded stores on temp dirs. The embedding model loads once per test process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from executive.memory.store.base import NewMemory, Store
from executive.memory.store.local import LocalStore
from executive.memory.write.envelope import Defaults
from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import HarvestLedger
from executive.testing import InMemoryStore
from tests.memory.payloads import DEFAULTS


async def open_store(root: Path, backend: str = "local") -> Store:
    """A real store under ``root``: the embedded one, or the journaled in-memory one."""
    if backend == "inmemory":
        return await InMemoryStore.open(root / "store")
    return await LocalStore.open(root / "store", root / "mem0")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[LocalStore]:
    opened = await open_store(tmp_path)
    yield opened
    await opened.close()


@pytest.fixture
def ledger(tmp_path: Path) -> HarvestLedger:
    return HarvestLedger(tmp_path / "ledgers" / "harvest-runs")


@pytest.fixture
def harvester(store: LocalStore, ledger: HarvestLedger) -> Harvester:
    return Harvester(store, ledger, DEFAULTS, timeout_seconds=30)


def scope(run_id: str = "2026-12-01-fill", user_id: str = "agent-test") -> dict[str, str]:
    return {"user_id": user_id, "agent_id": "executive", "run_id": run_id}


def meta(i: int, **extra) -> dict:
    kinds = ["semantic", "procedural", "reflective", "episodic", "principle"]
    return {
        "type": kinds[i % 5],
        "confidence": [0.8, 0.65, 0.75, 1.0, 1.0][i % 5],
        "env": "prod",
        "app_id": f"app-{i % 7}",
        "key": f"{i:032x}",
        **extra,
    }


async def fill(store: LocalStore, count: int, user_id: str = "agent-test") -> None:
    items = [
        NewMemory(
            f"Memory number {i}: bundle app-{i % 7} learned lesson {i * 7919 % 1000}.",
            scope(user_id=user_id),
            meta(i),
        )
        for i in range(count)
    ]
    for start in range(0, count, 256):
        receipts = await store.add_many(items[start : start + 256])
        assert all(r.confirmed for r in receipts)


# Several pages of the embedded store's listing: pages of 128 here (1,000 in production), so
# the paging is the same and the fill (an embedding each) a third.
PAGED_COUNT, PAGE = 300, 128


@asynccontextmanager
async def several_pages(root: Path) -> AsyncIterator[Store]:
    """An embedded store at ``root`` holding ``PAGED_COUNT`` memories over several pages."""
    from executive.memory.store import edge

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(edge, "_PAGE", PAGE)
        store = await open_store(root)
        try:
            await fill(store, PAGED_COUNT)
            yield store
        finally:
            await store.close()


__all__ = [
    "DEFAULTS",
    "PAGED_COUNT",
    "Defaults",
    "fill",
    "meta",
    "open_store",
    "scope",
    "several_pages",
]
