"""The Postgres store's word index follows what other executives write, fetching only the
rows that moved, and only for the apps a request names (a real Postgres, no mock)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from executive.memory.store import pgwords
from executive.memory.store.base import Filter, NewMemory
from executive.memory.store.postgres import PostgresStore
from tests.memory.conftest import meta, scope

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = datetime(2026, 12, 3, tzinfo=UTC)


def where(app: str) -> Filter:
    return Filter(user_id="agent-test", app_ids=(app,), env="prod", min_confidence=0.7)


async def test_another_executives_writes_reach_the_index_row_by_row(pg_url, tmp_path, monkeypatch):
    mine = await PostgresStore.open(pg_url, tmp_path / "mine")
    other = await PostgresStore.open(pg_url, tmp_path / "other")  # another executive's pool
    fetched: list[str] = []
    original = pgwords.record_from_payload

    def counting(memory_id, payload):
        fetched.append(payload.get("data"))
        return original(memory_id, payload)

    monkeypatch.setattr(pgwords, "record_from_payload", counting)
    try:
        lessons = [
            NewMemory(f"Lesson {i}: the mirror resets.", scope(), meta(i * 5, app_id="fetch"))
            for i in range(6)
        ]
        receipts = await other.add_many(lessons)
        await other.add(NewMemory("The site needs node.", scope(), meta(40, app_id="site")))
        index = await mine.words([where("fetch")], 0.7, NOW)
        assert index is not None and index.n == 6 and len(fetched) == 6  # the site: not read
        fetched.clear()
        await other.update(receipts[0].memory_id, text="Lesson 0: the mirror is fixed.")
        await other.delete(receipts[1].memory_id)
        await other.add(NewMemory("Lesson 9: retry the cache.", scope(), meta(45, app_id="fetch")))
        index = await mine.words([where("fetch")], 0.7, NOW)
        assert sorted(fetched) == ["Lesson 0: the mirror is fixed.", "Lesson 9: retry the cache."]
        assert index is not None and index.n == 6
        assert index.search(["fix"], 5) == [receipts[0].memory_id]
        assert receipts[1].memory_id not in {r.id for r in index.records()}
        fetched.clear()
        assert (await mine.words([where("fetch")], 0.7, NOW)).n == 6 and not fetched  # current
        site = await mine.words([where("site"), where("fetch")], 0.7, NOW)
        assert site.n == 7 and fetched == ["The site needs node."]
    finally:
        await other.close()
        await mine.close()
