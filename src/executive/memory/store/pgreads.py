"""The Postgres store's reads: a question's search, and a listing.

A search runs in the caller's transaction at REPEATABLE READ, so the store revision it reads
and the rows it returns come from one snapshot: what it leaves in :mod:`pgcache` is filed
under the revision it belongs to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from psycopg import sql

from executive.memory.store import pgschema
from executive.memory.store.base import Filter, MemoryRecord
from executive.memory.store.pgcache import ORDER, Held, as_server_reads, nearest
from executive.memory.store.pgschema import compile_sql
from executive.memory.store.records import record_from_payload

PAGE = 1000


def _snapshot(conn: Any) -> int:
    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    return pgschema.revision(conn)


def _scored(
    hits: Sequence[tuple[str, float]], known: Mapping[str, MemoryRecord]
) -> list[MemoryRecord]:
    """Hits (id, cosine distance) as scored records; negative cosines dropped, as mem0's
    threshold 0.0 and the local store do, and records without text."""
    return [
        known[i].with_score(1.0 - d) for i, d in hits if d <= 1.0 and i in known and known[i].text
    ]


def search(
    conn: Any,
    held: Held,
    text: str,
    wheres: Sequence[Filter],
    top_k: int,
    *,
    hold: bool,
) -> list[list[MemoryRecord]]:
    """Each filter's ``top_k`` nearest memories to the query (``text``: its ``vector_text``):
    with ``hold``, from the scope's vectors held in process (loaded now if the scope is small
    enough), else from the server's index."""
    revision = _snapshot(conn)
    unit = as_server_reads(text) if hold else None
    out = []
    for where in wheres:
        condition, params = compile_sql(where)
        hits = None
        if unit is not None:
            hits = held.vectors.search(conn, revision, condition, params, unit, top_k)
        if hits is None:  # a one-off, or a scope too large to hold: one round, payloads too
            rows = conn.execute(
                sql.SQL(
                    "SELECT id::text, payload, vector <=> %s::vector AS distance FROM {} "
                    "WHERE {} ORDER BY distance LIMIT %s"
                ).format(pgschema.TABLE_ID, condition),
                [text, *params, top_k],
            ).fetchall()
            known = {row[0]: record_from_payload(row[0], row[1]) for row in rows}
            hits = [(row[0], float(row[2])) for row in rows]
        else:
            known = held.records.records(conn, revision, [i for i, d in hits if d <= 1.0])
        out.append(_scored(hits, known))
    return out


def search_held(
    conn: Any, held: Held, text: str, wheres: Sequence[Filter], top_k: int
) -> list[list[MemoryRecord]] | None:
    """:func:`search` from what is held alone, with one statement (the store's revision, in
    autocommit): None as soon as anything would have to be read, and the caller searches in
    a snapshot. What is held at revision R is the store at R, so while the revision is still
    R the answers are those :func:`search` gives."""
    revision = pgschema.revision(conn)
    unit: np.ndarray | None = None
    out = []
    for where in wheres:
        condition, params = compile_sql(where)
        found, entry = held.vectors.peek(conn, revision, condition, params)
        if not found or entry is None:
            return None
        if unit is None:
            unit = as_server_reads(text)
        hits = nearest(entry, unit, top_k) or []
        known = held.records.held(revision, [i for i, d in hits if d <= 1.0])
        if known is None:
            return None
        out.append(_scored(hits, known))
    return out


def listing(conn: Any, where: Filter | None) -> list[MemoryRecord]:
    """Every matching memory, oldest first, in pages (keyset, not OFFSET), from one snapshot."""
    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    condition, params = compile_sql(where)
    records: list[MemoryRecord] = []
    after: tuple[str, Any] | None = None
    while True:
        keyset = sql.SQL("({}) > (%s, %s::uuid)").format(ORDER) if after else sql.SQL("TRUE")
        # Ids as text: a record keeps its id as text, and a UUID object per row cost more
        # than the rest of the row's decoding but its JSON (see pgpool's jsonb loaders).
        query = sql.SQL(
            "SELECT id::text, payload, COALESCE(payload->>'created_at', '') "
            "FROM {} WHERE {} AND {} ORDER BY {} LIMIT %s"
        ).format(pgschema.TABLE_ID, condition, keyset, ORDER)
        # One row past the page says whether another follows: a listing of exactly a page
        # (a thousand memories) is one round trip, not two.
        rows = conn.execute(query, [*params, *(after or ()), PAGE + 1]).fetchall()
        more = len(rows) > PAGE
        del rows[PAGE:]
        records += [record_from_payload(row[0], row[1]) for row in rows]
        if not more:
            return records
        after = (rows[-1][2], rows[-1][0])
