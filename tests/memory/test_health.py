"""The store's health: a count held against the harvest ledger, a store that does not answer
named with its cause, and the fix for each kind."""

from __future__ import annotations

import socket

import pytest

from executive.memory import health
from executive.memory.store.base import Filter, NewMemory
from executive.memory.write.ledger import HarvestLedger
from executive.settings import load_settings

pytestmark = pytest.mark.anyio


def confirmed(ledger: HarvestLedger, key: str, user_id: str, status: str = "SUCCEEDED") -> None:
    payload = {"text": f"memory {key}", "user_id": user_id, "metadata": {"type": "semantic"}}
    ledger.record(
        {"op": "add", "attempt": f"a-{key}", "key": key, "status": status, "payload": payload}
    )


def test_the_ledger_counts_this_installations_confirmed_live_memories(tmp_path):
    ledger = HarvestLedger(tmp_path / "harvest-runs")
    for key in ("k1", "k2", "k3"):
        confirmed(ledger, key, "me")
    confirmed(ledger, "theirs", "a-peer")
    confirmed(ledger, "pending", "me", status="PENDING")
    assert health.confirmed_live(ledger, "me") == 3
    assert health.confirmed_live(ledger, None) == 4  # no installation id: everything
    ledger.record({"op": "delete", "attempt": "d-k1", "key": "k1", "status": "SUCCEEDED"})
    assert health.confirmed_live(ledger, "me") == 2  # the cache follows the files


def test_pending_writes_are_counted_from_the_same_fold_kept_while_the_files_are_unchanged(
    tmp_path, monkeypatch
):
    ledger = HarvestLedger(tmp_path / "harvest-runs")
    confirmed(ledger, "k1", "me")
    confirmed(ledger, "waiting", "me", status="PENDING")
    assert health.pending_writes(ledger) == 1
    assert health.confirmed_live(ledger, "me") == 1
    folds = []
    monkeypatch.setattr(ledger, "state", lambda: folds.append(1) or HarvestLedger.state(ledger))
    assert health.pending_writes(ledger) == 1  # a scrape again: the files are unchanged
    assert folds == []
    confirmed(ledger, "waiting", "me")  # the replay confirms it: the files changed
    assert health.pending_writes(ledger) == 0
    assert health.confirmed_live(ledger, "me") == 2
    assert folds == [1]


async def test_a_store_short_of_the_ledger_is_named_with_rebuild(tmp_path):
    from executive.memory.store.inmemory import InMemoryStore

    settings = load_settings(tmp_path, user_id="me")
    ledger = HarvestLedger(tmp_path / "harvest-runs")
    for key in ("k1", "k2"):
        confirmed(ledger, key, "me")
    store = await InMemoryStore.open(tmp_path / "store")
    found = await health.check(settings, store, ledger)
    assert (found.state, found.total, found.expected, found.missing) == ("short", 0, 2, 2)
    assert "mem rebuild" in found.fix
    from tests.memory.conftest import meta, scope

    for i in range(2):
        await store.add(NewMemory(f"memory {i}", scope(user_id="me"), meta(i)))
    assert await store.count(Filter(user_id="me")) == 2
    assert (await health.check(settings, store, ledger)).state == "ok"


async def test_a_postgres_server_that_does_not_answer_is_down_with_its_cause_in_seconds(
    tmp_path,
):
    """A closed port on loopback (bound, never listening): refused at once. The answer is
    "down", names the refusal, and its fix starts the server, never rebuilds."""
    pytest.importorskip("psycopg_pool")
    from executive.memory.store.postgres import PostgresStore

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        url = f"postgresql://executive:secret@127.0.0.1:{port}/memory"
        settings = load_settings(tmp_path, store_backend="postgres", store_url=url, user_id="me")
        store = await PostgresStore.open(url, tmp_path / "mem0")
        ledger = HarvestLedger(tmp_path / "harvest-runs")
        try:
            found = await health.check(settings, store, ledger)
            # Known down: the next call asks the server directly, not the pool, and says
            # the same.
            again = await health.check(settings, store, ledger)
        finally:
            await store.close()
    assert again.state == "down" and again.detail == found.detail
    assert found.state == "down"
    assert "refused" in found.detail.lower() and "secret" not in found.detail
    assert found.fix.startswith("start the database server") and "rebuild" not in found.fix
