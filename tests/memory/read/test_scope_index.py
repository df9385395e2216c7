"""A request's index (masked parts of the store's word index) gives exactly what one index
over the memories it keeps gives; and packs read from an index kept write by write are the
packs an index built afresh for every request gives."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from executive.hooks.builtin import pre_spawn
from executive.memory.read import plan
from executive.memory.read.lexical import LexicalIndex
from executive.memory.read.ranking import admissible
from executive.memory.read.reader import Reader, ReadRequest, Scope
from executive.memory.read.scope_index import ScopedIndex
from executive.memory.read.words import terms
from executive.memory.store.base import Filter, MemoryRecord, NewMemory, ReadView
from executive.memory.store.local import LocalStore
from executive.memory.store.wordindex import WordIndex
from tests.memory.bm25 import plain_bm25, single
from tests.memory.conftest import fill, meta, scope

WORDS = ["deploy", "mirror", "econnreset", "flaky-fetch", "run_2", "lesson", "app-3", "cache"]


def record(i: int, text: str) -> MemoryRecord:
    return MemoryRecord(
        id=f"m{i}",
        text=text,
        metadata={"type": "semantic", "confidence": 0.9},
        created_at=f"2026-11-{1 + i % 4:02d}",
    )


texts = st.lists(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    scopes=st.lists(st.tuples(texts, st.integers(0, 2**12)), min_size=1, max_size=3),
    query=st.lists(st.sampled_from([*WORDS, "absent"]), max_size=5),
    boost=st.dictionaries(st.sampled_from(WORDS), st.sampled_from([0.5, 2.0]), max_size=2),
    top_k=st.integers(1, 40),
)
def test_masked_parts_search_as_one_index_over_what_they_keep(scopes, query, boost, top_k):
    counter = iter(range(10_000))
    parts, kept = [], []
    for scope_texts, bits in scopes:
        records = [record(next(counter), text) for text in scope_texts]
        live = np.array([bool(bits >> k & 1) for k in range(len(records))], np.bool_)
        parts.append((LexicalIndex(records), live))
        kept += [r for r, on in zip(records, live, strict=True) if on]
    union = ScopedIndex(parts)
    query_terms = [t for w in query for t in terms(w)] or query
    assert union.search(query_terms, top_k, boost or None) == plain_bm25(
        kept, query_terms, top_k, boost or None
    )
    whole = single(kept)
    assert union.n == whole.n and sorted(r.id for r in union.records()) == sorted(
        r.id for r in kept
    )
    for word in [*terms(" ".join(WORDS)), "absent"]:
        assert union.df.get(word, 0) == whole.df.get(word, 0)
        assert union.idf(word) == whole.idf(word) and union.share(word) == whole.share(word)
    for r in kept:
        assert union.get(r.id) is r


class AfreshView(ReadView):
    """The store's reads, but a word index built afresh from a listing for every request:
    what the reader had before the store kept its index."""

    def __init__(self, store: LocalStore) -> None:
        super().__init__(store)
        self.built = 0

    async def words(self, wheres, floor, now):
        listed = [r for where in wheres for r in await self.list(where)]
        self.built += 1
        return WordIndex([r for r in listed if admissible(r, floor, now)]).view(wheres, floor, now)


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
    # Two scopes that share memories: each memory counts once.
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


async def _packs(view) -> list:
    now = datetime(2026, 12, 2, tzinfo=UTC)
    out = []
    for request in _requests():
        reader = Reader(view, user_id="agent-test", now=now)
        out.append(_fingerprint(*await pre_spawn.build(reader, request)))
    return out


@pytest.mark.anyio
async def test_packs_from_the_index_kept_write_by_write_are_those_of_one_built_afresh(
    store: LocalStore,
):
    await fill(store, 150)
    rules = [
        NewMemory(
            f"Rule {i}: never push lesson {i} to the mirror unreviewed.",
            scope(),
            {**meta(i), "app_id": "_global"},
        )
        for i in range(40)
    ]
    await store.add_many(rules)
    kept = ReadView(store)
    first = await _packs(kept)  # the store builds its index here, once
    assert all(packed[1] for packed in first) and first == await _packs(AfreshView(store))
    # Then writes: new memories, texts and fields changed, memories deleted.
    listed = await store.list(Filter(user_id="agent-test"))
    await store.add_many(
        [
            NewMemory(f"Lesson {i}: the mirror of app-3 wants a retry.", scope(), meta(i))
            for i in range(40)
        ]
    )
    for record in listed[:30:3]:
        await store.update(record.id, text=record.text + " The deploy needs the cache warm.")
    for record in listed[1:30:3]:
        await store.update(record.id, metadata={"confidence": 0.5, "app_id": "app-6"})
    for record in listed[2:30:3]:
        await store.delete(record.id)
    afresh = AfreshView(store)
    assert await _packs(kept) == await _packs(afresh)
    assert afresh.built == len(_requests())
