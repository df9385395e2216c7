"""One contract, every store: the embedded store, the Postgres store (a real server), the
Platform adapter over its wire fake and the in-memory store behave alike where the rest of
the daemon depends on it; a backend that differed would make a pack, a drift or a rebuild
depend on where the memory lives.

Where a backend differs by design, the contract says so with a capability, not a skip:
the Platform picks its own ids, cannot say a revision, ranks by its own rules and takes the
delete of a memory already gone as done.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

import pytest

from executive.memory.read.ranking import admissible
from executive.memory.store.base import (
    Filter,
    NewMemory,
    Store,
    StoreError,
    missing,
    search_scopes,
    words,
)
from executive.memory.store.local import LocalStore
from executive.memory.store.platform import PlatformStore
from executive.testing import InMemoryStore
from tests.memory.bm25 import plain_bm25
from tests.memory.conftest import meta as tmeta
from tests.memory.conftest import scope as tscope
from tests.memory.store.platform_fake import FakePlatform

pytestmark = pytest.mark.anyio

KEY = "m0-contract-SECRET-0123456789abcdef"
USER = "agent-contract"
SCOPE = {"user_id": USER, "agent_id": "executive", "run_id": "2026-12-03-contract"}


@dataclass
class Backend:
    open: Callable[[], Awaitable[Store]]
    keeps_ids: bool = True  # a rebuild can give a memory back its id
    has_revision: bool = True
    refuses_a_second_delete: bool = True
    keeps_words: bool = True  # a word index kept as it writes (the reader's BM25)


def _backends() -> list:
    return [
        pytest.param("inmemory", id="inmemory"),
        pytest.param("local", id="local", marks=pytest.mark.store),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
        pytest.param("platform", id="platform"),
    ]


@pytest.fixture(params=_backends())
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    kind = request.param
    with ExitStack() as stack:
        if kind == "inmemory":
            yield Backend(lambda: InMemoryStore.open(tmp_path / "store"))
        elif kind == "local":
            yield Backend(lambda: LocalStore.open(tmp_path / "store", tmp_path / "mem0"))
        elif kind == "postgres":
            from executive.memory.store.postgres import PostgresStore

            url = request.getfixturevalue("pg_url")
            yield Backend(lambda: PostgresStore.open(url, tmp_path / "mem0"))
        else:
            fake = stack.enter_context(FakePlatform(api_key=KEY))
            yield Backend(
                lambda: PlatformStore.open(
                    KEY,
                    host=fake.url,
                    mem0_dir=tmp_path / "mem0",
                    poll_seconds=0.01,
                    poll_timeout_seconds=5.0,
                ),
                keeps_ids=False,
                has_revision=False,
                refuses_a_second_delete=False,
                keeps_words=False,
            )


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[Store]:
    opened = await backend.open()
    yield opened
    await opened.close()


def meta(type: str, app_id: str, key: str, confidence: float = 0.8, **extra: object) -> dict:
    return {
        "type": type,
        "confidence": confidence,
        "env": "prod",
        "app_id": app_id,
        "key": key,
        **extra,
    }


LESSONS = [
    ("The staging mirror resets connections on first contact.", "semantic", "fetch", 0.9),
    ("Retry the fetch with a backoff of five seconds.", "procedural", "fetch", 0.7),
    ("Never push to a remote without a person's approval.", "principle", "_global", 1.0),
    ("The landing page build needs node twenty.", "semantic", "site", 0.75),
    ("Builds of the site pass after a clean install.", "reflective", "site", 0.8),
]


async def fill(store: Store) -> list[str]:
    ids = []
    for i, (text, type, app, confidence) in enumerate(LESSONS):
        receipt = await store.add(
            NewMemory(
                text,
                SCOPE,
                meta(type, app, f"{i:032x}", confidence),
                created_at=f"2026-11-{10 + i:02d}T08:00:00+00:00",
            )
        )
        assert receipt.confirmed, receipt
        ids.append(receipt.memory_id)
    return ids


async def test_add_then_get_returns_what_was_written(store: Store):
    receipt = await store.add(
        NewMemory("Pin uv in CI.", SCOPE, meta("procedural", "ci", "a" * 32, tags=["ci"]))
    )
    assert receipt.confirmed
    record = await store.get(receipt.memory_id)
    assert record is not None
    assert record.text == "Pin uv in CI."
    assert (record.user_id, record.agent_id, record.run_id) == (
        USER,
        "executive",
        SCOPE["run_id"],
    )
    assert record.app_id == "ci" and record.type == "procedural"
    assert record.key == "a" * 32 and record.confidence == 0.8
    assert record.metadata["tags"] == ["ci"]
    assert await store.get("00000000-0000-4000-8000-000000000000") is None


async def test_search_honours_every_filter(store: Store):
    ids = await fill(store)
    everyone = Filter(user_id=USER)

    hits = await store.search("staging mirror resets connections", everyone, 5)
    assert hits and hits[0].id == ids[0]
    assert all(h.score is not None for h in hits)
    assert len(await store.search("fetch", everyone, 2)) <= 2

    def found(hits: list) -> set[str]:
        return {h.id for h in hits}

    query = "fetch site build push"
    assert found(await store.search(query, everyone.narrowed(app_ids=("site",)), 10)) == {
        ids[3],
        ids[4],
    }
    assert found(
        await store.search(query, everyone.narrowed(app_ids=("fetch", "_global")), 10)
    ) == {ids[0], ids[1], ids[2]}
    assert found(await store.search(query, everyone.narrowed(types=("semantic",)), 10)) == {
        ids[0],
        ids[3],
    }
    assert found(await store.search(query, everyone.narrowed(min_confidence=0.85), 10)) == {
        ids[0],
        ids[2],
    }
    assert found(await store.search(query, everyone.narrowed(key=f"{1:032x}"), 10)) == {ids[1]}
    assert await store.search(query, everyone.narrowed(env="test"), 10) == []
    assert await store.search(query, Filter(user_id="someone-else"), 10) == []


async def test_list_is_ordered_by_creation_and_count_agrees(store: Store):
    ids = await fill(store)
    listed = await store.list(Filter(user_id=USER))
    assert [r.id for r in listed] == ids
    site = Filter(user_id=USER, app_ids=("site",))
    assert [r.id for r in await store.list(site)] == ids[3:]
    assert await store.count(site) == 2
    assert await store.count(Filter(user_id=USER)) == len(LESSONS)


async def test_delete_removes_it_from_every_read(store: Store):
    ids = await fill(store)
    await store.delete(ids[1])
    assert await store.get(ids[1]) is None
    assert ids[1] not in {r.id for r in await store.list(Filter(user_id=USER))}
    assert await store.count(Filter(user_id=USER)) == len(LESSONS) - 1
    hits = await store.search("Retry the fetch with a backoff", Filter(user_id=USER), 10)
    assert ids[1] not in {h.id for h in hits}


async def test_revision_moves_with_every_write(backend: Backend, store: Store):
    first = await store.revision()
    if not backend.has_revision:
        assert first is None  # other clients write the same project: it cannot know
        return
    receipt = await store.add(NewMemory("One.", SCOPE, meta("semantic", "app", "c" * 32)))
    second = await store.revision()
    await store.update(receipt.memory_id, text="One, changed.")
    third = await store.revision()
    await store.delete(receipt.memory_id)
    fourth = await store.revision()
    assert len({first, second, third, fourth}) == 4
    assert await store.revision() == fourth  # reads leave it alone


async def test_a_confirmed_write_survives_a_reopen(backend: Backend):
    store = await backend.open()
    ids = await fill(store)
    await store.close()
    again = await backend.open()
    try:
        assert [r.id for r in await again.list(Filter(user_id=USER))] == ids
        assert (await again.get(ids[2])).text == LESSONS[2][0]
    finally:
        await again.close()


async def test_add_many_keeps_ids_and_history_where_the_backend_can(backend: Backend, store: Store):
    item = NewMemory(
        "Rebuilt lesson, second wording.",
        SCOPE,
        meta("semantic", "app", "d" * 32),
        created_at="2026-11-01T00:00:00+00:00",
        memory_id="6f1b2c3d-0000-4000-8000-00000000abcd",
        history=(
            {"event": "ADD", "old": None, "new": "Rebuilt lesson."},
            {
                "event": "UPDATE",
                "old": "Rebuilt lesson.",
                "new": "Rebuilt lesson, second wording.",
                "at": "2026-11-02T00:00:00+00:00",
            },
        ),
    )
    (receipt,) = await store.add_many([item])
    assert receipt.confirmed
    if not backend.keeps_ids:
        assert (await store.get(receipt.memory_id)).text == item.text
        return
    assert receipt.memory_id == item.memory_id
    assert [row["event"] for row in await store.history(item.memory_id)] == ["ADD", "UPDATE"]


async def test_add_refuses_an_id_or_history_to_keep_and_writes_nothing(store: Store):
    kept_id = NewMemory(
        "A rebuild's memory.", SCOPE, meta("semantic", "app", "e" * 32), memory_id=str(uuid4())
    )
    with_history = NewMemory(
        "Another rebuild's memory.",
        SCOPE,
        meta("semantic", "app", "f" * 32),
        history=({"event": "ADD", "old": None, "new": "Another rebuild's memory."},),
    )
    for item in (kept_id, with_history):
        with pytest.raises(ValueError, match="add_many"):
            await store.add(item)
    assert await store.count() == 0


async def test_a_write_is_confirmed_read_back_and_found_by_its_filters(store):
    receipt = await store.add(
        NewMemory(
            "Run the migrations on a scratch database first.",
            tscope("2026-12-01-migrate"),
            tmeta(1, app_id="billing", type="procedural", confidence=0.8, tags=["db", "migrate"]),
            created_at="2026-12-01T09:00:00+00:00",
        )
    )
    assert receipt.confirmed
    record = await store.get(receipt.memory_id)
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
        hits = await store.search(question, where, 5)
        assert bool(hits) is found, where
        assert await store.count(where) == int(found), where
        assert [r.id for r in await store.list(where)] == ([receipt.memory_id] * found)
        assert all(0.0 <= r.score <= 1.0 for r in hits)


async def test_listing_is_oldest_first_and_the_key_lookup_finds_one(store):
    items = [
        NewMemory(f"Memory {i}.", tscope(), tmeta(i), f"2026-12-0{9 - i}T00:00:00+00:00")
        for i in range(5)
    ]
    receipts = await store.add_many(items)
    assert all(r.confirmed for r in receipts)
    listed = await store.list(Filter(user_id="agent-test"))
    assert [r.text for r in listed] == [f"Memory {i}." for i in reversed(range(5))]
    [found] = await store.list(Filter(user_id="agent-test", key=f"{2:032x}"))
    assert found.id == receipts[2].memory_id


async def test_update_merges_history_follows_and_a_delete_is_final(backend: Backend, store: Store):
    # How the revision moves with these writes: test_revision_moves_with_every_write.
    receipt = await store.add(NewMemory("Original.", tscope(), tmeta(0, importance="low")))
    await store.update(receipt.memory_id, metadata={"importance": "high"})
    await store.update(receipt.memory_id, text="Changed.")
    record = await store.get(receipt.memory_id)
    assert record.text == "Changed."
    assert record.metadata["importance"] == "high" and record.metadata["type"] == "semantic"
    events = [h["event"] for h in await store.history(receipt.memory_id)]
    assert events[0] == "ADD" and events[-1] == "UPDATE"
    await store.delete(receipt.memory_id)
    assert await store.get(receipt.memory_id) is None
    if backend.refuses_a_second_delete:
        with pytest.raises(StoreError):
            await store.delete(receipt.memory_id)


async def test_a_wipe_of_one_installation_leaves_every_other_installations_memories(store):
    theirs = (
        await store.add(NewMemory("Theirs.", tscope(user_id="other-user"), tmeta(1)))
    ).memory_id
    await store.add_many([NewMemory(f"Mine {i}.", tscope(), tmeta(i)) for i in range(3)])
    await store.wipe("agent-test")
    assert [r.id for r in await store.list(None)] == [theirs]
    assert await store.count(Filter(user_id="agent-test")) == 0
    assert [h["new_memory"] for h in await store.history(theirs)] == ["Theirs."]
    assert (await store.add(NewMemory("After.", tscope(), tmeta(0)))).confirmed
    assert await store.count() == 2


async def test_wipe_empties_and_the_store_takes_writes_again(store):
    await store.add_many([NewMemory(f"M {i}.", tscope(), tmeta(i)) for i in range(3)])
    await store.wipe()
    assert await store.count() == 0
    assert await store.list(None) == []
    assert (await store.add(NewMemory("After.", tscope(), tmeta(0)))).confirmed
    assert await store.count() == 1


WORD_FILTERS = [
    *(
        Filter(user_id=USER, agent_id="executive", app_ids=(app,), env="prod", min_confidence=0.7)
        for app in ("fetch", "site", "_global", "new")
    ),
    Filter(user_id=USER, app_ids=("fetch", "site"), types=("semantic", "procedural")),
    Filter(user_id=USER),  # every app
]
WORD_QUERIES = [["mirror"], ["fetch", "build", "site"], ["node", "twenty", "approval"]]


async def _words_agree(store: Store) -> int:
    """Each reader filter's word index is the one the store's listing gives; the memories
    it holds, counted."""
    now = datetime(2026, 12, 3, tzinfo=UTC)
    held = 0
    for where in WORD_FILTERS:
        index = await words(store, [where], 0.7, now)
        kept = [r for r in await store.list(where) if admissible(r, 0.7, now)]
        assert index is not None
        assert sorted(r.id for r in index.records()) == sorted(r.id for r in kept)
        for query in WORD_QUERIES:
            assert index.search(query, 10) == plain_bm25(kept, query, 10), (where, query)
        held += index.n
    return held


async def test_a_store_says_which_powers_it_lacks_and_still_answers_without_them(
    backend: Backend, store: Store
):
    await fill(store)
    lacks = {c.name: c.without for c in missing(store)}
    assert ("words" in lacks) is not backend.keeps_words
    assert all(reason.strip() for reason in lacks.values())
    # Without its own search_scopes a store is searched scope by scope: the same answers.
    many = await search_scopes(store, "mirror fetch", WORD_FILTERS, 5)
    one_by_one = [await store.search("mirror fetch", where, 5) for where in WORD_FILTERS]
    assert [[r.id for r in rs] for rs in many] == [[r.id for r in rs] for rs in one_by_one]


async def test_the_word_index_follows_every_write(backend: Backend, store: Store):
    ids = await fill(store)
    if not backend.keeps_words:
        assert await words(store, WORD_FILTERS, 0.7, datetime.now(UTC)) is None
        return
    assert await _words_agree(store)  # the index is built here; every write below updates it
    await store.add(
        NewMemory("The new mirror needs a fetch.", SCOPE, meta("semantic", "new", "n1"))
    )
    more = [
        NewMemory(f"Site build {i} ran.", SCOPE, meta("episodic", "site", f"s{i}", 1.0))
        for i in range(3)
    ]
    await store.add_many(more)
    await store.update(ids[0], text="The staging mirror is fixed; fetch works.")
    await store.update(ids[3], metadata={"confidence": 0.5})  # now below the floor
    await store.update(ids[1], metadata={"app_id": "site"})  # moved to another project
    await store.delete(ids[4])
    assert await _words_agree(store)
    await store.wipe()
    assert await _words_agree(store) == 0


def test_every_store_the_settings_accept_is_a_row_of_the_one_table():
    from typing import get_args

    from executive.memory.store.backends import BACKENDS
    from executive.settings import Settings

    choices = get_args(Settings.model_fields["store_backend"].annotation)
    assert sorted(BACKENDS) == sorted(choices)
