"""The store contract: what every backend the harvester and the reader use must do the same.

Run against the embedded store and the Postgres store (a real server); a backend that
differs here would make a pack, a drift or a rebuild depend on where the memory lives.
"""

from __future__ import annotations

import pytest

from executive.memory.store.base import Filter, NewMemory, Store, StoreError
from tests.memory.conftest import meta, open_store, scope

pytestmark = pytest.mark.anyio

BACKENDS = ["local", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
async def any_store(request, tmp_path):
    if request.param == "local":
        store: Store = await open_store(tmp_path)
    else:
        from executive.memory.store.postgres import PostgresStore

        url = request.getfixturevalue("pg_url")
        store = await PostgresStore.open(url, tmp_path / "mem0")
    yield store
    await store.close()


async def test_a_write_is_confirmed_read_back_and_found_by_its_filters(any_store):
    receipt = await any_store.add(
        "Run the migrations on a scratch database first.",
        scope("2026-12-01-migrate"),
        meta(1, app_id="billing", type="procedural", confidence=0.8, tags=["db", "migrate"]),
        created_at="2026-12-01T09:00:00+00:00",
    )
    assert receipt.confirmed
    record = await any_store.get(receipt.memory_id)
    assert record.text == "Run the migrations on a scratch database first."
    assert (record.user_id, record.agent_id, record.run_id, record.app_id) == (
        "agent-test",
        "executive",
        "2026-12-01-migrate",
        "billing",
    )
    assert record.created_at.startswith("2026-12-01T09:00:00")
    assert record.metadata["tags"] == ["db", "migrate"] and record.confidence == 0.8
    question = "How do I run database migrations safely?"
    for where, found in [
        (Filter(user_id="agent-test"), True),
        (Filter(user_id="agent-test", app_ids=("billing", "other")), True),
        (Filter(user_id="agent-test", types=("procedural",), env="prod"), True),
        (Filter(user_id="agent-test", metadata=(("tags", "db"),)), True),
        (Filter(user_id="agent-test", min_confidence=0.85), False),
        (Filter(user_id="agent-test", app_ids=("other",)), False),
        (Filter(user_id="agent-test", run_id="2026-12-02-x"), False),
        (Filter(user_id="someone-else"), False),
    ]:
        hits = await any_store.search(question, where, 5)
        assert bool(hits) is found, where
        assert await any_store.count(where) == int(found), where
        assert [r.id for r in await any_store.list(where)] == ([receipt.memory_id] * found)
        assert all(0.0 <= r.score <= 1.0 for r in hits)


async def test_listing_is_oldest_first_and_the_key_lookup_finds_one(any_store):
    items = [
        NewMemory(f"Memory {i}.", scope(), meta(i), f"2026-12-0{9 - i}T00:00:00+00:00")
        for i in range(5)
    ]
    receipts = await any_store.add_many(items)
    assert all(r.confirmed for r in receipts)
    listed = await any_store.list(Filter(user_id="agent-test"))
    assert [r.text for r in listed] == [f"Memory {i}." for i in reversed(range(5))]
    [found] = await any_store.list(Filter(user_id="agent-test", key=f"{2:032x}"))
    assert found.id == receipts[2].memory_id


async def test_update_merges_history_follows_delete_removes_revision_moves(any_store):
    first = await any_store.revision()
    receipt = await any_store.add("Original.", scope(), meta(0, importance="low"))
    after_add = await any_store.revision()
    assert after_add != first
    await any_store.update(receipt.memory_id, metadata={"importance": "high"})
    await any_store.update(receipt.memory_id, text="Changed.")
    record = await any_store.get(receipt.memory_id)
    assert record.text == "Changed."
    assert record.metadata["importance"] == "high" and record.metadata["type"] == "semantic"
    events = [h["event"] for h in await any_store.history(receipt.memory_id)]
    assert events[0] == "ADD" and "UPDATE" in events
    after_update = await any_store.revision()
    assert after_update != after_add
    await any_store.delete(receipt.memory_id)
    assert await any_store.get(receipt.memory_id) is None
    assert await any_store.revision() != after_update
    with pytest.raises(StoreError):
        await any_store.delete(receipt.memory_id)


async def test_wipe_empties_and_the_store_takes_writes_again(any_store):
    await any_store.add_many([NewMemory(f"M {i}.", scope(), meta(i)) for i in range(3)])
    await any_store.wipe()
    assert await any_store.count() == 0
    assert await any_store.list(None) == []
    assert (await any_store.add("After.", scope(), meta(0))).confirmed
    assert await any_store.count() == 1
