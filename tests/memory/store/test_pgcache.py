"""The Postgres store's held scopes: exact, fresh across executives, bounded by counts."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from executive.memory.store import pgcache, pgreads
from executive.memory.store.base import Filter, NewMemory
from executive.memory.store.postgres import PostgresStore
from tests.memory.conftest import fill, meta, scope

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

QUESTIONS = [
    "What did bundle app-3 learn?",
    "Which lesson is number 42?",
    "Memory about app-5 lessons",
    "What should I know before a release?",
]


@pytest.fixture
async def two(pg_url, tmp_path):
    """Two executives' stores on one database."""
    a = await PostgresStore.open(pg_url, tmp_path / "a")
    b = await PostgresStore.open(pg_url, tmp_path / "b")
    yield a, b
    await a.close()
    await b.close()


async def test_a_held_scope_finds_what_the_servers_index_finds(two):
    a, _ = two
    await fill(a, 60)
    where = Filter(user_id="agent-test", app_ids=("app-3",), env="prod", min_confidence=0.7)
    for question in QUESTIONS:
        served = await a.search(question, where, 5)  # one-off: the server's exact scan
        [held] = await a.search_scopes(question, [where], 5)  # loads and holds the scope
        [again] = await a.search_scopes(question, [where], 5)  # from what it holds
        assert [r.id for r in held] == [r.id for r in served] == [r.id for r in again]
        for x, y in zip(held, served, strict=True):
            assert x.score == pytest.approx(y.score, abs=1e-5)
            assert x.text == y.text and x.metadata == y.metadata


async def test_a_held_scope_is_searched_with_one_statement_until_the_store_moves(two, monkeypatch):
    a, b = two
    await fill(a, 20)
    where = Filter(user_id="agent-test", app_ids=("app-4",))
    [first] = await a.search_scopes("Which lesson did app-4 learn?", [where], 5)  # loads it
    snapshot_reads = []
    real = pgreads.search
    monkeypatch.setattr(
        pgreads, "search", lambda *args, **kw: snapshot_reads.append(1) or real(*args, **kw)
    )
    [again] = await a.search_scopes("Which lesson did app-4 learn?", [where], 5)
    assert [r.id for r in again] == [r.id for r in first] and snapshot_reads == []
    await b.add(NewMemory("A lesson of app-4, written by B.", scope(), meta(98, app_id="app-4")))
    await a.search_scopes("Which lesson did app-4 learn?", [where], 5)
    assert snapshot_reads == [1]  # the revision moved: read again, in a snapshot


async def test_another_executives_write_and_update_are_seen_at_once(two):
    a, b = two
    await fill(a, 20)
    where = Filter(user_id="agent-test", app_ids=("app-2",))
    listed = await a.list(where)
    assert not a._held.vectors._scopes  # a listing carries no vectors and holds nothing
    [before] = await a.search_scopes("release checklist for the mirror", [where], 50)
    assert {r.id for r in before} == {r.id for r in listed}
    new = await b.add(
        NewMemory(
            "The release checklist: warm the mirror first.", scope(), meta(99, app_id="app-2")
        )
    )
    [after] = await a.search_scopes("release checklist for the mirror", [where], 50)
    assert after[0].id == new.memory_id  # B's write moved the revision: A reads afresh
    await b.update(new.memory_id, text="The release checklist: drain the mirror first.")
    [updated] = await a.search_scopes("release checklist for the mirror", [where], 50)
    assert updated[0].text == "The release checklist: drain the mirror first."
    await b.delete(new.memory_id)
    [gone] = await a.search_scopes("release checklist for the mirror", [where], 50)
    assert new.memory_id not in {r.id for r in gone}


async def test_a_scope_over_the_limit_is_left_to_the_server(two, monkeypatch):
    a, _ = two
    await fill(a, 30)
    monkeypatch.setattr(a._held, "vectors", pgcache.ScopeVectors(scope_rows=3))
    small = Filter(user_id="agent-test", app_ids=("app-1",), types=("principle",))  # 1 row
    large = Filter(user_id="agent-test", app_ids=("app-1",))  # 5 rows
    found = await a.search_scopes("lesson", [small, large], 10)
    assert [len(x) for x in found] == [1, 5]
    held = a._held.vectors._scopes
    assert [entry is not None for entry in held.values()] == [True, False]


def test_an_older_snapshot_never_overwrites_a_newer_revision():
    vectors = pgcache.ScopeVectors()
    assert vectors._at(5)
    assert not vectors._at(4)  # a slow reader of revision 4 finishing late
    assert vectors._revision == 5


def _binary(values: list[float]) -> bytes:
    """A vector as pgvector sends it in binary: its dimension, two unused bytes, the floats
    big-endian."""
    return struct.pack(f">hh{len(values)}f", len(values), 0, *values)


def test_vectors_in_pgvectors_binary_form_become_unit_rows():
    rows = pgcache.unit_rows([_binary([3.0, 4.0, 0.0]), _binary([0.0, 0.0, 2.0])])
    assert rows.dtype == np.float32
    assert rows.tolist() == [[0.6000000238418579, 0.800000011920929, 0.0], [0.0, 0.0, 1.0]]
    assert pgcache.unit_rows([]).shape == (0,)
