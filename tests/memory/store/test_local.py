"""The embedded adapter against a real mem0 store on a temp dir."""

from __future__ import annotations

import anyio
import pytest

from executive.memory.store.base import Filter, NewMemory, ReadView
from executive.memory.store.local import LocalStore, compile_filter
from executive.memory.store.records import record_from_payload
from executive.memory.write.classify import validate
from tests.memory.conftest import PAGED_COUNT, fill, meta, open_store, scope, several_pages
from tests.memory.payloads import stamped

pytestmark = pytest.mark.anyio


COUNT = PAGED_COUNT


@pytest.fixture(scope="module")
async def filled(tmp_path_factory) -> LocalStore:
    async with several_pages(tmp_path_factory.mktemp("filled")) as store:
        yield store


async def test_listing_returns_all_of_several_pages_of_memories(filled):
    records = await filled.list(Filter(user_id="agent-test"))
    assert len(records) == COUNT
    assert len({r.id for r in records}) == COUNT
    assert await filled.count() == COUNT
    assert await filled.count(Filter(user_id="agent-test", app_ids=("app-3",))) == len(
        [r for r in records if r.app_id == "app-3"]
    )


async def test_listing_filters_by_app_type_and_confidence(filled):
    where = Filter(
        user_id="agent-test", app_ids=("app-1", "app-2"), types=("semantic",), min_confidence=0.7
    )
    records = await filled.list(where)
    assert records
    assert all(r.app_id in {"app-1", "app-2"} and r.type == "semantic" for r in records)
    assert all(r.confidence >= 0.7 for r in records)
    expected = [i for i in range(COUNT) if i % 7 in (1, 2) and i % 5 == 0]
    assert len(records) == len(expected)


async def test_search_filters_on_stored_confidence_not_score(filled):
    where = Filter(user_id="agent-test", types=("procedural",), min_confidence=0.7)
    assert await filled.search("Which lesson did the bundle learn?", where, 10) == []
    found = await filled.search(
        "Which lesson did bundle app-3 learn?", Filter(user_id="agent-test", min_confidence=0.7), 10
    )
    assert found and all(r.confidence >= 0.7 for r in found)
    assert all(r.score is not None for r in found)


async def test_add_then_search_with_a_full_question_and_filters(store):
    payload = validate(stamped("principle"))
    receipt = await store.add(
        NewMemory(payload.text, scope(payload.run_id), payload.flat_metadata())
    )
    assert receipt.confirmed
    await store.add(
        NewMemory(
            "Cats like warm windowsills.", scope(), meta(1, app_id="_global", type="semantic")
        )
    )
    where = Filter(
        user_id="agent-test",
        agent_id="executive",
        app_ids=("_global",),
        types=("principle",),
        min_confidence=0.7,
    )
    found = await store.search(
        "Am I allowed to push my commits to the remote repository?", where, 5
    )
    assert [r.id for r in found] == [receipt.memory_id]
    assert found[0].app_id == "_global"
    assert found[0].metadata["key"] == payload.key


async def test_get_update_merges_metadata_history_delete(store):
    receipt = await store.add(NewMemory("Original text.", scope(), meta(0, importance="low")))
    memory_id = receipt.memory_id
    await store.update(memory_id, metadata={"importance": "high"})
    record = await store.get(memory_id)
    assert record.metadata["importance"] == "high"
    assert record.metadata["type"] == "semantic"  # merged, not replaced
    await store.update(memory_id, text="Changed text.")
    assert (await store.get(memory_id)).text == "Changed text."
    events = [row["event"] for row in await store.history(memory_id)]
    assert events[0] == "ADD" and "UPDATE" in events
    await store.delete(memory_id)
    assert await store.get(memory_id) is None


async def test_concurrent_adds_from_async_tasks_give_no_errors(store):
    errors: list[BaseException] = []

    async def one(i: int) -> None:
        try:
            receipt = await store.add(
                NewMemory(f"Concurrent memory {i}", scope(), meta(i, key=f"{i + 10_000:032x}"))
            )
            assert receipt.confirmed
        except BaseException as exc:  # collected, not raised, so all 50 run
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        for i in range(50):
            tg.start_soon(one, i)
    assert errors == []
    assert await store.count() == 50


async def test_wipe_empties_the_store(store):
    await fill(store, 5)
    await store.wipe()
    assert await store.count() == 0
    assert (await store.add(NewMemory("after wipe", scope(), meta(0)))).confirmed


async def test_the_store_reopens_with_what_it_held(tmp_path):
    first = await open_store(tmp_path)
    await fill(first, 3)
    await first.close()
    second = await open_store(tmp_path)
    try:
        assert await second.count() == 3
    finally:
        await second.close()


async def test_a_closed_store_refuses_calls(tmp_path):
    from executive.memory.store.base import StoreError

    store = await open_store(tmp_path)
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.count()


def test_filter_compiles_to_mem0_oss_shape():
    where = Filter(
        user_id="u",
        agent_id="executive",
        app_ids=("a", "b"),
        types=("semantic",),
        env="prod",
        min_confidence=0.7,
    )
    assert compile_filter(where) == {
        "user_id": "u",
        "agent_id": "executive",
        "AND": [
            {"app_id": {"in": ["a", "b"]}},
            {"type": "semantic"},
            {"env": "prod"},
            {"confidence": {"gte": 0.7}},
        ],
    }


def test_the_read_view_exposes_no_write_method():
    view = ReadView(object())  # type: ignore[arg-type]
    public = {name for name in dir(view) if not name.startswith("_")}
    assert public == {
        "search",
        "search_scopes",
        "prepare",
        "get",
        "history",
        "list",
        "count",
        "revision",
        "words",
    }


async def test_add_many_creates_the_same_records_as_add(store):
    single = await store.add(NewMemory("Same text, one by one.", scope(), meta(0, key="a" * 32)))
    [batched] = await store.add_many(
        [NewMemory("Same text, one by one.", scope(), meta(0, key="b" * 32))]
    )
    one, two = await store.get(single.memory_id), await store.get(batched.memory_id)
    strip = lambda r: r.model_dump(exclude={"id", "created_at", "updated_at", "metadata"})  # noqa: E731
    assert strip(one) == strip(two)
    assert {k: v for k, v in one.metadata.items() if k != "key"} == {
        k: v for k, v in two.metadata.items() if k != "key"
    }
    assert [h["event"] for h in await store.history(batched.memory_id)] == ["ADD"]
    found = await store.search("Same text one by one", Filter(user_id="agent-test"), 2)
    assert abs(found[0].score - found[1].score) < 1e-5


async def test_searches_follow_every_write(store):
    where = Filter(user_id="agent-test", app_ids=("app-1",), types=("semantic",))
    await fill(store, 30)
    before = await store.search("Which lesson did bundle app-1 learn?", where, 50)
    again = await store.search("Which lesson did bundle app-1 learn?", where, 50)
    assert [r.id for r in again] == [r.id for r in before]  # exact search: the same points
    receipt = await store.add(
        NewMemory(
            "Bundle app-1 learned a brand new lesson.",
            scope(),
            meta(0, app_id="app-1", key="f" * 32),
        )
    )
    after = await store.search("Which lesson did bundle app-1 learn?", where, 50)
    assert receipt.memory_id in {r.id for r in after}
    await store.delete(receipt.memory_id)
    assert receipt.memory_id not in {
        r.id for r in await store.search("Which lesson did bundle app-1 learn?", where, 50)
    }
    assert await store.count(where) == len(before)


async def test_lookup_by_key_follows_adds_deletes_and_wipes(store):
    await fill(store, 5)
    by_key = Filter(user_id="agent-test", key=f"{3:032x}")
    [found] = await store.list(by_key)
    assert found.key == f"{3:032x}"
    await store.delete(found.id)
    assert await store.list(by_key) == []
    [receipt] = await store.add_many([NewMemory("again", scope(), meta(3))])
    assert [r.id for r in await store.list(by_key)] == [receipt.memory_id]
    assert await store.list(Filter(user_id="someone-else", key=f"{3:032x}")) == []
    await store.wipe()
    assert await store.list(by_key) == []


async def test_search_gives_what_mem0s_own_search_gives(filled):
    # The adapter searches the vectors directly (no over-fetch): same hits, same scores.
    for where in (
        Filter(user_id="agent-test"),
        Filter(user_id="agent-test", app_ids=("app-3", "app-4"), min_confidence=0.7),
        Filter(user_id="agent-test", types=("episodic",), env="prod"),
    ):
        ours = await filled.search("Which lesson did bundle app-3 learn?", where, 25)
        theirs = filled._memory.search(
            "Which lesson did bundle app-3 learn?",
            top_k=25,
            filters=compile_filter(where),
            threshold=0.0,
        )["results"]
        assert [r.id for r in ours] == [t["id"] for t in theirs]
        assert [round(r.score, 6) for r in ours] == [round(t["score"], 6) for t in theirs]
        assert all(where.matches(r) for r in ours)


async def test_records_are_made_from_payloads_once_and_follow_every_write(store, monkeypatch):
    from executive.memory.store import edge

    await fill(store, 20)
    where = Filter(user_id="agent-test", app_ids=("app-1",))
    question = "Which lesson did bundle app-1 learn?"
    listed = await store.list(where)
    # The cached records are what the payloads give, as the shard holds them now.
    fresh = [
        record_from_payload(row.id, row.payload)
        for row in store._vectors.scroll(edge.compile_where(where))
    ]
    assert sorted(listed, key=lambda r: r.id) == sorted(fresh, key=lambda r: r.id)
    made: list[str] = []
    original = edge.record_from_payload
    monkeypatch.setattr(
        edge, "record_from_payload", lambda i, p, *a: made.append(str(i)) or original(i, p, *a)
    )
    first = await store.search(question, where, 10)
    assert made == [] and await store.list(where) == listed  # every hit was listed before
    target = first[0]
    await store.update(target.id, text="Bundle app-1 learned to pin the mirror.")
    await store.update(target.id, metadata={"confidence": 0.95})
    changed = await store.get(target.id)
    after = {r.id: r for r in await store.search(question, where, 10)}
    assert after[target.id].text == changed.text == "Bundle app-1 learned to pin the mirror."
    assert after[target.id].confidence == changed.confidence == 0.95
    assert made == [target.id]  # only the updated memory was made again
    assert {r.id: r.text for r in await store.list(where)}[target.id] == changed.text
    await store.delete(target.id)
    assert target.id not in {r.id for r in await store.search(question, where, 10)}
    await store.wipe()
    assert await store.search(question, where, 10) == [] and await store.list(where) == []
