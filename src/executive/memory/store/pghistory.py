"""mem0's history manager, in Postgres: one history for every executive sharing the store.

mem0 keeps the history of each memory in a SQLite file per host (``history_db_path``), so an
executive would see only the history of what it wrote itself. This class has the methods
mem0's ``Memory`` calls on ``memory.db`` (2.2.1, ``SQLiteManager``) and writes to the
``memory_history`` table that ``pgschema`` creates, on the store's own pool.
"""

from __future__ import annotations

import uuid
from typing import Any

from psycopg import sql

from executive.memory.store.pgschema import HISTORY

_COLUMNS = (
    "id",
    "memory_id",
    "old_memory",
    "new_memory",
    "event",
    "created_at",
    "updated_at",
    "is_deleted",
    "actor_id",
    "role",
)
_INSERT = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
    sql.Identifier(HISTORY),
    sql.SQL(", ").join(map(sql.Identifier, _COLUMNS)),
    sql.SQL(", ").join(sql.Placeholder() * len(_COLUMNS)),
)
_SELECT = sql.SQL("SELECT {} FROM {} WHERE memory_id = %s ORDER BY seq").format(
    sql.SQL(", ").join(map(sql.Identifier, _COLUMNS)), sql.Identifier(HISTORY)
)


class PgHistory:
    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @staticmethod
    def _row(record: dict[str, Any]) -> tuple[Any, ...]:
        row = {**record, "id": str(uuid.uuid4()), "is_deleted": int(record.get("is_deleted") or 0)}
        return tuple(row.get(column) for column in _COLUMNS)

    def add_history(
        self,
        memory_id: str,
        old_memory: str | None,
        new_memory: str | None,
        event: str,
        *,
        created_at: str | None = None,
        updated_at: str | None = None,
        is_deleted: int = 0,
        actor_id: str | None = None,
        role: str | None = None,
    ) -> None:
        fields = (memory_id, old_memory, new_memory, event, created_at, updated_at, is_deleted)
        self.batch_add_history([dict(zip(_COLUMNS[1:], (*fields, actor_id, role), strict=True))])

    def batch_add_history(self, records: list[dict[str, Any]]) -> None:
        with self._pool.connection() as conn, conn.cursor() as cur:
            cur.executemany(_INSERT, [self._row(r) for r in records])

    def get_history(self, memory_id: str) -> list[dict[str, Any]]:
        with self._pool.connection() as conn:
            rows = conn.execute(_SELECT, (memory_id,)).fetchall()
        return [
            dict(zip(_COLUMNS, row, strict=True)) | {"is_deleted": bool(row[7])} for row in rows
        ]

    # mem0 keeps chat messages for its infer path; every write of ours uses infer=False.
    def save_messages(self, messages: list[dict[str, Any]], session_scope: str) -> None:
        return None

    def get_last_messages(self, session_scope: str, limit: int = 10) -> list[dict[str, Any]]:
        return []

    def reset(self) -> None:
        return None  # the store's wipe truncates the table (with the memories, in one go)

    def close(self) -> None:
        return None  # the pool belongs to the store
