"""The harvester on the Postgres store: a lesson two executives write is stored once and each
ledger says so; a write during an outage stays pending and is replayed."""

from __future__ import annotations

import pytest

from executive.memory.store.base import Filter, StoreError
from executive.memory.store.postgres import PostgresStore
from executive.memory.write import ledger as L
from executive.memory.write.envelope import Defaults
from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import HarvestLedger
from tests.memory.payloads import partial

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


def _harvester(store, root, name: str) -> Harvester:
    ledger = HarvestLedger(root / name / "ledgers" / "harvest-runs")
    defaults = Defaults(user_id="agent-test", env="prod", executive=name)
    return Harvester(store, ledger, defaults, timeout_seconds=30)


async def test_the_same_lesson_from_two_executives_is_stored_once(pg_url, tmp_path):
    stores = [await PostgresStore.open(pg_url, tmp_path / f"m{n}") for n in (1, 2)]
    try:
        a, b = (
            _harvester(s, tmp_path, name)
            for s, name in zip(stores, ("exec-a", "exec-b"), strict=True)
        )
        lesson = partial("semantic")
        first = await a.add([lesson])
        # b's own checks run before the write: with them skipped, the database refuses it.
        [payload] = b.prepare([lesson])
        b._existing = _nothing  # as if both checked at the same moment
        second = await b.write(payload)
        assert first.results[0].status == L.SUCCEEDED
        assert second.ok and second.status == L.DUPLICATE
        assert second.memory_id == first.results[0].memory_id
        [stored] = await stores[0].list(Filter(user_id="agent-test"))
        assert stored.metadata["executive"] == "exec-a"  # who wrote it
        b_lines = list(b._ledger.entries())
        assert [e["status"] for e in b_lines] == [L.PENDING, L.DUPLICATE]
        assert b_lines[-1]["memory_id"] == stored.id
        assert b._ledger.state().pending() == [] and b._ledger.state().live() == {}
    finally:
        for store in stores:
            await store.close()


async def _nothing(*args, **kwargs):
    return None


async def _reachable(store: PostgresStore) -> None:
    """Each try waits at most the pool's timeout for a connection; the daemon's replay job
    does the same by its schedule."""
    for _ in range(100):
        try:
            await store.count()
            return
        except StoreError:
            continue
    raise AssertionError("the store never came back")


async def test_a_write_during_an_outage_stays_pending_and_is_replayed(pg_server, pg_url, tmp_path):
    # The session's server, stopped and started again: tests of one process run one at a
    # time, and every pool checks its connections before use.
    store = await PostgresStore.open(pg_url, tmp_path / "mem0", timeout_seconds=1)
    harvester = _harvester(store, tmp_path, "exec-a")
    try:
        try:
            pg_server.stop_only()
            result = await harvester.add([partial("semantic")])
        finally:
            pg_server.start_again()
        assert not result.ok and result.results[0].status == "ERROR"
        assert len(harvester._ledger.state().pending()) == 1
        await _reachable(store)  # the pool reconnects on its own backoff schedule
        assert await harvester.replay() == {"pending": 1, "confirmed": 1, "still_pending": 0}
        assert harvester._ledger.state().pending() == []
        assert await store.count() == 1
    finally:
        await store.close()
