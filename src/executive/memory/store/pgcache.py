"""What the Postgres store keeps in process for one store revision: scopes' vectors, records.

A pack asks ~6 questions of 2-3 scopes, 50-100 hits each. On the server each of those searches
read every row of its scope (~1,000 at 100,000 memories) and carried payloads through the
sort: ~5 ms apiece, most of a pack. So a scope small enough (``SCOPE_ROWS``) is read once per
revision, ids and vectors, and searched exactly in process; a larger one is searched by the
server's index. A hit's record is made from its payload once per revision.

Any write, by this executive or another, moves the revision (a trigger), and a new revision
empties both caches. The revision and the search are read in one snapshot (the caller's
REPEATABLE READ transaction), so nothing cached is older than the revision it is filed under.
Which scopes are cached depends on row counts, never on time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from psycopg import sql

from executive.memory.store import pgschema
from executive.memory.store.base import MemoryRecord
from executive.memory.store.records import record_from_payload

SCOPE_ROWS = 5_000  # a filter matching more rows is searched on the server
VECTOR_ROWS = 40_000  # vectors kept over all filters: ~60 MB at 384 dimensions
# A search's hits, made from their payloads once per revision: as many as there are vectors
# to find them, so a round of packs over the held scopes reads no hit twice.
RECORDS = VECTOR_ROWS
ORDER = sql.SQL("COALESCE(payload->>'created_at', ''), id")  # the listing's: oldest first
_TOO_MANY = None  # a filter known to match more than SCOPE_ROWS at this revision


def unit_rows(raw: Sequence[bytes]) -> np.ndarray:
    """pgvector's binary form (a 2-byte dimension, 2 unused bytes, big-endian floats) as
    unit rows."""
    if not raw:
        return np.zeros(0, np.float32)
    # One copy of all rows, read as (header, floats) records: no per-row slice.
    row = np.dtype([("header", "V4"), ("floats", ">f4", ((len(raw[0]) - 4) // 4,))])
    matrix = np.frombuffer(b"".join(raw), row)["floats"].astype(np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return matrix


def as_server_reads(text: str) -> np.ndarray:
    """The query as the server reads it: its ``vector_text`` form, as a unit vector."""
    values = np.array(text[1:-1].split(","), np.float32)
    return values / max(float(np.linalg.norm(values)), 1e-12)


def nearest(
    entry: tuple[list[str], np.ndarray] | None, query: np.ndarray, top_k: int
) -> list[tuple[str, float]] | None:
    """A held filter's ``top_k`` rows nearest ``query`` as (id, cosine distance), nearest
    first, ties by row order; None for a filter too large to hold."""
    if entry is _TOO_MANY:
        return None
    ids, matrix = entry
    if not ids:
        return []
    similarity = matrix @ query
    k = min(top_k, len(ids))
    best = np.argpartition(-similarity, k - 1)[:k]
    best = best[np.lexsort((best, -similarity[best]))]
    return [(ids[i], 1.0 - float(similarity[i])) for i in best]


def _key(conn: Any, condition: sql.Composable, params: Sequence[Any]) -> tuple[str, str]:
    """What names a filter's held rows: its SQL and its parameters, as text."""
    return condition.as_string(conn), repr(list(params))


class _PerRevision:
    """What is held for the newest store revision seen; the store's threads share it."""

    def __init__(self) -> None:
        self._revision: int | None = None
        self._lock = threading.Lock()

    def _clear(self) -> None:
        raise NotImplementedError

    def _at(self, revision: int) -> bool:
        """Move to ``revision`` if it is newer (emptying what is held); whether it is current.
        A slow reader of an older snapshot never brings its rows back over newer ones.
        Called with the lock held."""
        if self._revision is None or revision > self._revision:
            self._clear()
            self._revision = revision
        return revision == self._revision


class ScopeVectors(_PerRevision):
    def __init__(self, scope_rows: int = SCOPE_ROWS) -> None:
        super().__init__()
        self._scope_rows = scope_rows
        self._scopes: OrderedDict[tuple[str, str], tuple[list[str], np.ndarray] | None]
        self._scopes = OrderedDict()
        self._rows = 0

    def _clear(self) -> None:
        self._scopes.clear()
        self._rows = 0

    def search(
        self,
        conn: Any,
        revision: int,
        condition: sql.Composable,
        params: Sequence[Any],
        query: np.ndarray,
        top_k: int,
    ) -> list[tuple[str, float]] | None:
        """:func:`nearest` over the filter's rows, read first if not held at ``revision``."""
        key = _key(conn, condition, params)
        with self._lock:
            self._at(revision)
            missing = key not in self._scopes
            entry = self._scopes.get(key)
            if not missing:
                self._scopes.move_to_end(key)
        if missing:
            entry = self._load(conn, revision, key, condition, params)
        return nearest(entry, query, top_k)

    def peek(
        self, conn: Any, revision: int, condition: sql.Composable, params: Sequence[Any]
    ) -> tuple[bool, tuple[list[str], np.ndarray] | None]:
        """What is held for the filter at ``revision``, reading nothing: (False, None) when
        nothing is (another revision, or a filter not loaded yet)."""
        key = _key(conn, condition, params)
        with self._lock:
            if self._revision != revision or key not in self._scopes:
                return False, None
            self._scopes.move_to_end(key)
            return True, self._scopes[key]

    def _load(
        self,
        conn: Any,
        revision: int,
        key: tuple[str, str],
        condition: sql.Composable,
        params: Sequence[Any],
    ) -> tuple[list[str], np.ndarray] | None:
        rows = (
            conn.cursor(binary=True)
            .execute(
                sql.SQL(
                    "SELECT id::text, vector FROM {} WHERE {} AND vector IS NOT NULL "
                    "ORDER BY {} LIMIT %s"
                ).format(pgschema.TABLE_ID, condition, ORDER),
                [*params, self._scope_rows + 1],
            )
            .fetchall()
        )
        if len(rows) > self._scope_rows:
            return self._keep(revision, key, _TOO_MANY)
        return self._keep(revision, key, ([r[0] for r in rows], unit_rows([r[1] for r in rows])))

    def _keep(
        self,
        revision: int,
        key: tuple[str, str],
        entry: tuple[list[str], np.ndarray] | None,
    ) -> tuple[list[str], np.ndarray] | None:
        with self._lock:
            if self._at(revision) and key not in self._scopes:
                self._scopes[key] = entry
                self._rows += len(entry[0]) if entry else 0
                while self._rows > VECTOR_ROWS and len(self._scopes) > 1:
                    _, evicted = self._scopes.popitem(last=False)
                    self._rows -= len(evicted[0]) if evicted else 0
        return entry


class RecordCache(_PerRevision):
    def __init__(self) -> None:
        super().__init__()
        self._records: dict[str, MemoryRecord] = {}

    def _clear(self) -> None:
        self._records.clear()

    def _add(self, items: Iterable[tuple[str, MemoryRecord]]) -> None:
        """Hold ``items``, the oldest out past the limit. Called with the lock held."""
        self._records.update(items)
        while len(self._records) > RECORDS:
            del self._records[next(iter(self._records))]

    def held(self, revision: int, ids: Sequence[str]) -> dict[str, MemoryRecord] | None:
        """The records of ``ids`` if every one is held at ``revision``, reading nothing."""
        with self._lock:
            if self._revision != revision:
                return None
            try:
                return {i: self._records[i] for i in ids}
            except KeyError:
                return None

    def records(self, conn: Any, revision: int, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The records of ``ids``, read in the snapshot that gave ``revision``."""
        with self._lock:
            self._at(revision)
            missing = [i for i in dict.fromkeys(ids) if i not in self._records]
        fetched: dict[str, MemoryRecord] = {}
        if missing:
            rows = conn.execute(pgschema.BY_IDS, [missing]).fetchall()
            fetched = {row[0]: record_from_payload(row[0], row[1]) for row in rows}
        with self._lock:
            if self._at(revision):
                self._add(fetched.items())
            return {
                i: fetched.get(i) or self._records[i]
                for i in ids
                if i in fetched or i in self._records
            }


class Held:
    """Both caches of one store."""

    def __init__(self) -> None:
        self.vectors = ScopeVectors()
        self.records = RecordCache()
