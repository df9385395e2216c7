"""The Postgres store against a real Postgres with pgvector (no mock): one server per session,
a database per test."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.pq import Format

from executive.memory.store import pgpool, pgreads, pgschema
from executive.memory.store.base import Filter, NewMemory, StoreError
from executive.memory.store.pgpool import redacted
from executive.memory.store.pgschema import compile_sql
from executive.memory.store.postgres import PostgresStore
from tests.conftest import REPO, clean_env
from tests.memory.conftest import fill, meta, scope

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]


@pytest.fixture
async def pg_store(pg_url, tmp_path):
    store = await PostgresStore.open(pg_url, tmp_path / "mem0")
    yield store
    await store.close()


def _writer(
    url: str, mem0_dir: Path, *args: str, stdin: int | None = None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.memory.store.pg_writer", url, str(mem0_dir), *args],
        cwd=REPO,
        env=clean_env(),
        stdin=stdin,
        stdout=subprocess.PIPE,
        text=True,
    )


async def test_add_search_with_filters_get_history_update_delete(pg_store):
    receipt = await pg_store.add(
        NewMemory(
            "Never push to the remote without a review.",
            scope(),
            meta(0, app_id="_global", type="semantic", confidence=0.9),
        )
    )
    assert receipt.confirmed
    await pg_store.add(NewMemory("Cats like warm windowsills.", scope(), meta(1, app_id="app-1")))
    await pg_store.add(
        NewMemory("Pushing needs a review.", scope(), meta(2, app_id="_global", confidence=0.65))
    )
    where = Filter(user_id="agent-test", app_ids=("_global",), min_confidence=0.7)
    found = await pg_store.search("May I push my commits to the remote?", where, 5)
    assert [r.id for r in found] == [receipt.memory_id]
    assert 0.3 < found[0].score <= 1.0
    assert found[0].app_id == "_global" and found[0].metadata["key"] == f"{0:032x}"
    assert await pg_store.search("push", Filter(user_id="someone-else"), 5) == []

    await pg_store.update(receipt.memory_id, metadata={"importance": "high"})
    await pg_store.update(receipt.memory_id, text="Never push without a review.")
    record = await pg_store.get(receipt.memory_id)
    assert record.text == "Never push without a review."
    assert record.metadata["importance"] == "high" and record.metadata["type"] == "semantic"
    events = [row["event"] for row in await pg_store.history(receipt.memory_id)]
    assert events[0] == "ADD" and events.count("UPDATE") == 2
    await pg_store.delete(receipt.memory_id)
    assert await pg_store.get(receipt.memory_id) is None
    assert [row["event"] for row in await pg_store.history(receipt.memory_id)][-1] == "DELETE"
    assert await pg_store.get("not-a-uuid") is None


async def test_listing_is_ordered_and_paged_and_counts_match_the_filter(pg_store, monkeypatch):
    # Pages of 40 instead of 1,000: the keyset paging is the same, the fill 10x smaller.
    monkeypatch.setattr(pgreads, "PAGE", 40)
    await fill(pg_store, 110)  # two whole pages and a part
    late = await pg_store.add(
        NewMemory(
            "Written last, created first.",
            scope(),
            meta(0, key="e" * 32),
            created_at="2000-01-01T00:00:00+00:00",
        )
    )
    records = await pg_store.list(Filter(user_id="agent-test"))
    assert len(records) == 111 and len({r.id for r in records}) == 111
    assert records[0].id == late.memory_id
    order = [(r.created_at or "", r.id) for r in records]
    assert order == sorted(order)
    monkeypatch.setattr(pgreads, "PAGE", 37)  # three pages exactly: the last is full
    assert [r.id for r in await pg_store.list(Filter(user_id="agent-test"))] == [
        r.id for r in records
    ]
    where = Filter(
        user_id="agent-test", app_ids=("app-1", "app-2"), types=("semantic",), min_confidence=0.7
    )
    chosen = await pg_store.list(where)
    assert chosen and all(where.matches(r) for r in chosen)
    assert len(chosen) == len([r for r in records if where.matches(r)])
    assert await pg_store.count(where) == len(chosen)
    assert await pg_store.count() == 111
    [one] = await pg_store.list(Filter(user_id="agent-test", key=f"{7:032x}"))
    assert one.key == f"{7:032x}"
    tagged = Filter(user_id="agent-test", metadata=(("tags", "x"),))
    assert await pg_store.count(tagged) == 0


async def test_revision_moves_with_every_write_and_is_seen_by_another_process(
    pg_store, pg_url, tmp_path
):
    other = await PostgresStore.open(pg_url, tmp_path / "other")  # its own pool
    try:
        before = await other.revision()
        receipt = await pg_store.add(NewMemory("One.", scope(), meta(0)))
        after_add = await other.revision()
        assert after_add != before
        refused = await pg_store.add(
            NewMemory("One, again.", scope(), meta(0))
        )  # same key: refused
        assert refused.status == "DUPLICATE" and refused.memory_id == receipt.memory_id
        assert await other.revision() == after_add  # nothing was written
        await pg_store.update(receipt.memory_id, metadata={"importance": "low"})
        after_update = await other.revision()
        assert after_update != after_add
        await pg_store.delete(receipt.memory_id)
        assert await other.revision() != after_update
    finally:
        await other.close()


async def test_wipe_empties_and_keeps_the_schema(pg_store, pg_url):
    await fill(pg_store, 5)
    revision = await pg_store.revision()
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as mem0's reset() would do
        conn.execute("DROP INDEX memories_key_uniq")
    await pg_store.wipe()
    assert await pg_store.count() == 0
    assert await pg_store.revision() != revision
    with psycopg.connect(pg_url) as conn:
        indexes = {row[0] for row in conn.execute("SELECT indexname FROM pg_indexes")}
    assert {"memories_key_uniq", "memories_hnsw_idx", "memories_reader_idx"} <= indexes
    assert "memories_scope_idx" not in indexes  # superseded by the reader's index
    assert "memories_text_lemmatized_idx" not in indexes  # no hybrid keyword search
    assert (await pg_store.add(NewMemory("after wipe", scope(), meta(0)))).confirmed
    assert (
        await pg_store.add(NewMemory("after wipe again", scope(), meta(0)))
    ).status == "DUPLICATE"


async def test_add_many_keeps_ids_and_reports_a_taken_key(pg_store):
    receipts = await pg_store.add_many(
        [
            NewMemory(
                "Kept id.", scope(), meta(0), memory_id="11111111-2222-3333-4444-555555555555"
            ),
            NewMemory("Other key.", scope(), meta(1)),
            NewMemory("Same key as the first.", scope(), meta(0)),
        ]
    )
    assert [r.status for r in receipts] == ["SUCCEEDED", "SUCCEEDED", "DUPLICATE"]
    assert receipts[0].memory_id == "11111111-2222-3333-4444-555555555555"
    assert receipts[2].memory_id == receipts[0].memory_id
    assert [h["event"] for h in await pg_store.history(receipts[0].memory_id)] == ["ADD"]


async def test_the_first_use_race_creates_the_schema_once(pg_url):
    errors: list[BaseException] = []

    def migrate() -> None:
        try:
            with psycopg.connect(pg_url) as conn:
                pgschema.migrate(conn, 384)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=migrate) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


async def test_a_confirmed_write_survives_a_sigkill_of_the_writer(pg_url, tmp_path):
    writer = _writer(pg_url, tmp_path / "mem0-writer", "kill", "40")
    confirmed = []
    for line in writer.stdout:
        if re.fullmatch(r"[0-9a-f-]{36}", line.strip()):
            confirmed.append(line.strip())
        if len(confirmed) == 40:
            break
    writer.kill()  # SIGKILL: no close, no pool shutdown
    writer.wait(30)
    assert len(confirmed) == 40
    store = await PostgresStore.open(pg_url, tmp_path / "mem0")
    try:
        assert await store.count(Filter(user_id="agent-test")) == 40
        for memory_id in confirmed:
            assert (await store.get(memory_id)).text.startswith("Killed writer memory")
        assert [h["event"] for h in await store.history(confirmed[-1])] == ["ADD"]
    finally:
        await store.close()


async def test_two_processes_writing_the_same_lesson_store_it_once(pg_url, tmp_path):
    writers = [
        _writer(
            pg_url,
            tmp_path / f"mem0-writer-{n}",
            "race",
            f"The same lesson, told by writer {n}.",
            "d" * 32,
            stdin=subprocess.PIPE,
        )
        for n in (1, 2)
    ]
    for writer in writers:
        assert writer.stdout.readline().strip() == "ready"
    for writer in writers:  # both released together: each already past every check
        writer.stdin.write("go\n")
        writer.stdin.flush()
    results = [json.loads(writer.stdout.readline()) for writer in writers]
    for writer in writers:
        assert writer.wait(60) == 0
    assert sorted(r["status"] for r in results) == ["DUPLICATE", "SUCCEEDED"]
    assert results[0]["memory_id"] == results[1]["memory_id"]
    store = await PostgresStore.open(pg_url, tmp_path / "mem0")
    try:
        assert await store.count(Filter(user_id="agent-test", key="d" * 32)) == 1
    finally:
        await store.close()


async def test_the_pool_survives_a_server_restart(pg_server, pg_url, tmp_path):
    # The session's server: tests of one process run one at a time.
    store = await PostgresStore.open(pg_url, tmp_path / "mem0", timeout_seconds=60)
    try:
        assert (await store.add(NewMemory("Before the restart.", scope(), meta(0)))).confirmed
        pg_server.restart()  # every pooled connection is now dead
        assert await store.count() == 1  # no "connection is lost": checked before use
        assert (await store.add(NewMemory("After the restart.", scope(), meta(1)))).confirmed
        assert len(await store.search("restart", Filter(user_id="agent-test"), 5)) == 2
    finally:
        await store.close()


async def test_the_store_refuses_another_embedder(pg_url, tmp_path):
    first = await PostgresStore.open(pg_url, tmp_path / "a")
    await first.add(NewMemory("Made with int8 vectors.", scope(), meta(0)))
    await first.add(NewMemory("Another's.", scope(user_id="someone-else"), meta(1)))
    await first.close()
    other = await PostgresStore.open(pg_url, tmp_path / "b", embedder="minilm-fp32")
    try:
        with pytest.raises(StoreError, match=r"built with the embedder .*mem rebuild"):
            await other.search("vectors", Filter(user_id="agent-test"), 5)
        with pytest.raises(StoreError, match="built with the embedder"):
            await other.add(NewMemory("More.", scope(), meta(1)))
        # What `executive mem rebuild` does first: another installation's vectors stay, so
        # the embedder cannot change, and nothing is deleted.
        with pytest.raises(StoreError, match="1 memories of other installations share"):
            await other.wipe("agent-test")
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 2
        await other.wipe()  # everyone's: then it takes the new embedder
        assert (await other.add(NewMemory("More.", scope(), meta(1)))).confirmed
    finally:
        await other.close()


async def test_the_readers_filter_is_answered_from_one_index_and_the_old_one_goes(pg_url):
    with psycopg.connect(pg_url, autocommit=True) as conn:
        pgschema.migrate(conn, 384)
        # A store made before the reader's index: its narrower scope index is dropped.
        conn.execute(
            "CREATE INDEX memories_scope_idx ON memories ((payload->>'user_id'), "
            "(payload->>'app_id'), (payload->>'type'))"
        )
        pgschema.migrate(conn, 384)
        indexes = {row[0] for row in conn.execute("SELECT indexname FROM pg_indexes")}
        assert "memories_reader_idx" in indexes and "memories_scope_idx" not in indexes
        where = Filter(
            user_id="u", agent_id="executive", app_ids=("demo",), env="prod", min_confidence=0.7
        )
        condition, params = compile_sql(where)
        conn.execute("SET enable_seqscan = off")  # an empty table: ask for the index plan
        plan = "\n".join(
            row[0]
            for row in conn.execute(
                sql.SQL("EXPLAIN SELECT id FROM memories WHERE {}").format(condition), params
            )
        )
    # Every condition of the reader's filter is an index condition: no row is read to test it.
    assert "memories_reader_idx" in plan and "Filter:" not in plan, plan


async def test_a_memorys_row_stays_whole_in_the_table(pg_store, pg_url):
    """Its vector and payload in the row, not in the TOAST table: a scope's search reads a
    thousand vectors, a listing a thousand payloads (pgvector's default storage put every
    vector of a row over ~2 kB there)."""
    # ~1 kB that does not compress: the row is over 2 kB however Postgres stores it.
    long = "Checksums seen: " + " ".join(hashlib.sha256(bytes([i])).hexdigest() for i in range(16))
    await pg_store.add(NewMemory(long, scope(), meta(0)))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        sizes = conn.execute(
            "SELECT pg_column_size(vector), pg_column_size(payload), "
            "pg_relation_size((SELECT reltoastrelid FROM pg_class WHERE relname = 'memories')) "
            "FROM memories"
        ).fetchone()
        assert sizes[0] + sizes[1] > 2500 and sizes[2] == 0, sizes
        pgschema.migrate(conn, 384)  # again: nothing to change, no ALTER (and no lock)
        options = conn.execute("SELECT reloptions FROM pg_class WHERE relname = 'memories'")
        assert options.fetchone()[0] == [f"toast_tuple_target={pgschema.ROW_TARGET}"]


async def test_payloads_come_back_as_written_through_the_pools_loaders(pg_store, pg_url):
    """The pool decodes jsonb itself (pgpool): every read, text or binary, gives what a plain
    connection with psycopg's own loaders gives, non-ASCII text included."""
    text = "Le café ☕ ferme à 18 h — naïve “quotes” and 😀"
    receipt = await pg_store.add(NewMemory(text, scope(), meta(0, app_id="app-ü")))
    where = Filter(user_id="agent-test", app_ids=("app-ü",))
    [listed] = await pg_store.list(where)
    [found] = await pg_store.search("a café closing time", where, 3)
    got = await pg_store.get(receipt.memory_id)
    assert listed.text == found.text == got.text == text
    with psycopg.connect(pg_url) as plain:
        [(payload,)] = plain.execute("SELECT payload FROM memories").fetchall()
    with pg_store._pool.connection() as conn:
        jsonb = conn.adapters.types["jsonb"].oid
        assert conn.adapters.get_loader(jsonb, Format.TEXT) is pgpool._JsonbText
        assert conn.adapters.get_loader(jsonb, Format.BINARY) is pgpool._JsonbBinary
        assert conn.execute("SELECT payload FROM memories").fetchone()[0] == payload
        assert (
            conn.cursor(binary=True).execute("SELECT payload FROM memories").fetchone()[0]
            == payload
        )


async def test_every_pooled_connection_scans_the_index_iteratively(pg_store):
    await pg_store.count()
    with pg_store._pool.connection() as conn:
        assert conn.execute("SHOW hnsw.iterative_scan").fetchone()[0] == "relaxed_order"


def test_the_url_is_logged_without_its_password():
    url = "postgresql://exec:s3cr%40t@db.example:5432/mem?sslmode=verify-full&password=x2"
    shown = redacted(url)
    assert "s3cr" not in shown and "x2" not in shown
    assert shown == "postgresql://exec:***@db.example:5432/mem?sslmode=verify-full&password=***"
