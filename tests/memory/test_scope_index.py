"""Per-scope lexical indexes give exactly what one index over every scope's memories gave."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from executive.hooks.builtin import pre_spawn
from executive.memory import plan
from executive.memory import reader as reader_module
from executive.memory.lexical import LexicalIndex
from executive.memory.ranking import admissible
from executive.memory.reader import Reader, ReadRequest, Scope
from executive.memory.scope_index import IndexCache, ScopedIndex
from executive.memory.store.base import Filter, MemoryRecord, NewMemory, ReadView
from executive.memory.store.local import LocalStore
from executive.memory.words import terms
from tests.memory.conftest import fill, meta, scope

WORDS = ["deploy", "mirror", "econnreset", "flaky-fetch", "run_2", "lesson", "app-3", "cache"]


def record(i: int, text: str) -> MemoryRecord:
    return MemoryRecord(id=f"m{i}", text=text, metadata={"type": "semantic", "confidence": 0.9})


texts = st.lists(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    scopes=st.lists(texts, min_size=1, max_size=3),
    query=st.lists(st.sampled_from([*WORDS, "absent"]), max_size=5),
    boost=st.dictionaries(st.sampled_from(WORDS), st.sampled_from([0.5, 2.0]), max_size=2),
    top_k=st.integers(1, 40),
)
def test_the_union_of_scope_indexes_scores_as_one_index(scopes, query, boost, top_k):
    counter = iter(range(10_000))
    parts = [[record(next(counter), text) for text in scope_texts] for scope_texts in scopes]
    whole = LexicalIndex(r for part in parts for r in part)
    union = ScopedIndex([LexicalIndex(part) for part in parts])
    assert union.search(query, top_k, boost or None) == whole.search(query, top_k, boost or None)
    assert union.n == whole.n and dict(union.records) == whole.records
    for word in [*terms(" ".join(WORDS)), "absent"]:
        assert union.df.get(word, 0) == whole.df.get(word, 0)
        assert union.idf(word) == whole.idf(word) and union.share(word) == whole.share(word)


def test_the_cache_keeps_the_recently_used_and_forgets_an_old_revision():
    cache = IndexCache()
    for i in range(IndexCache.SIZE):
        cache.put(1, (i,), LexicalIndex([]))
    assert cache.get(1, (0,)) is not None  # used: the oldest is now (1,)
    cache.put(1, ("new",), LexicalIndex([]))
    assert cache.get(1, (1,)) is None and cache.get(1, (0,)) is not None
    cache.put(2, ("new",), LexicalIndex([]))
    assert cache.get(1, (0,)) is None and cache.get(2, (0,)) is None


async def _whole_scope_index(view, cache, wheres, floor, now):
    """The index before it was kept per scope: one index over every scope's memories."""
    if await view.revision() is None:
        return None
    records = []
    for where in wheres:
        records += [r for r in await view.list(where) if admissible(r, floor, now)]
    return LexicalIndex(records)


class CountingView(ReadView):
    def __init__(self, store: LocalStore) -> None:
        super().__init__(store)
        self.listed: list[Filter | None] = []

    async def list(self, where=None):
        self.listed.append(where)
        return await super().list(where)


def _requests() -> list[ReadRequest]:
    steps = [
        plan.for_step(
            title=f"Learn the lesson of app-{app}",
            slug=f"app-{app}",
            app_id=f"app-{app}",
            step_number=1 + app % 3,
            step_title=f"Apply lesson {517 + app}",
            vendor="command",
            description="Check the mirror before the deploy.",
            retry_attempt=1 + app % 2,
            last_error="error: lesson 517 missing",
        )
        for app in range(7)
    ]
    failure = plan.for_failure(
        title="Ship app-2",
        slug="app-2",
        app_id="app-2",
        step_title="Ship it",
        vendor="claude",
        attempts=3,
        last_error="ECONNRESET from the mirror",
        signal="network",
    )
    # Two scopes that share memories: answered by one index over both, as before.
    overlapping = ReadRequest(
        topic="overlap",
        questions=("Which lesson did app-4 learn?",),
        scopes=(Scope("app-4", app_ids=("app-4",)), Scope("apps", app_ids=("app-4", "app-5"))),
    )
    return [
        *steps,
        failure,
        plan.for_bundle(title="Ship", slug="app-1", app_id="app-1"),
        overlapping,
    ]


def _fingerprint(built, result):
    return (
        built.markdown,
        [(m.id, m.score) for m in result.memories],
        result.questions,
        result.lexical,
        result.stop_reason,
        sorted(result.relevant),
    )


@pytest.mark.anyio
async def test_packs_are_the_same_as_with_one_index_over_every_scope(
    store: LocalStore, monkeypatch: pytest.MonkeyPatch
):
    await fill(store, 150)
    rules = [
        NewMemory(f"Rule {i}: never push lesson {i} to the mirror unreviewed.", scope(), meta(i))
        for i in range(40)
    ]
    await store.add_many(
        [NewMemory(r.text, r.scope, {**r.metadata, "app_id": "_global"}) for r in rules]
    )
    now = datetime(2026, 12, 2, tzinfo=UTC)
    view, indexes = CountingView(store), IndexCache()
    before = []
    with monkeypatch.context() as patched:
        patched.setattr(reader_module, "scope_index", _whole_scope_index)
        for request in _requests():
            reader = Reader(ReadView(store), user_id="agent-test", now=now, indexes=IndexCache())
            before.append(_fingerprint(*await pre_spawn.build(reader, request)))
    after = []
    for request in _requests():
        reader = Reader(view, user_id="agent-test", now=now, indexes=indexes)
        after.append(_fingerprint(*await pre_spawn.build(reader, request)))
    assert all(result[1] for result in after)
    assert after == before
    # Each scope was listed once for the revision: the global scope for every bundle, once.
    assert len(view.listed) == len(set(view.listed))
    assert [w.app_ids for w in view.listed].count(("_global",)) == 1
