"""The Postgres store's schema: created once, idempotently, under an advisory lock.

mem0's pgvector provider creates its table lazily, on first use, with ``IF NOT EXISTS``; two
processes doing that at once fail on Postgres' catalog unique indexes (``postgres-store.md``
§4). So every process runs :func:`migrate` before it builds mem0, holding one transaction-level
advisory lock: the first creates, the others wait and find everything there.

What it creates, beside mem0's own table shape ``(id uuid, vector vector(N), payload jsonb)``:

- an HNSW index on the vectors (cosine; filtered search needs ``hnsw.iterative_scan``, set on
  every pooled connection, so pgvector ≥ 0.8.0 is required and checked);
- B-tree indexes on the payload fields our filters name, and on the listing order;
- ``UNIQUE (user_id, key)`` for rows that have a key: two executives writing the same lesson at
  the same moment store it once, whatever their own checks saw before the write;
- the revision: one counter row bumped by a statement trigger in the writing transaction, so
  it moves exactly when a write becomes visible, in every process;
- the history of every memory (mem0 keeps it in a per-host SQLite file; shared here);
- the embedder the vectors were made with (a store refuses another one).

No hybrid (full-text) index: we search semantically only, and the reader runs its own BM25.
"""

from __future__ import annotations

import json
from typing import Any

from psycopg import sql

from executive.memory.store.base import Filter

TABLE = "memories"
HISTORY = "memory_history"
REVISION = "executive_revision"
META = "executive_meta"
# Any constant will do; it names "the executive's schema migration" among advisory locks.
LOCK_ID = 0x6578_6563_7574_6976  # "executiv"
MIN_PGVECTOR = (0, 8, 0)
TABLE_ID, _HISTORY, _REVISION, _META = map(sql.Identifier, (TABLE, HISTORY, REVISION, META))
# The rows of some ids, as records are made from them (pgcache, pgwords).
BY_IDS = sql.SQL("SELECT id::text, payload FROM {} WHERE id = ANY(%s::uuid[])").format(TABLE_ID)
ROW_TARGET = 4080  # bytes: a row is compressed or moved out of line only past this
# Payload fields a Filter compiles to; each gets a B-tree expression index (which also gives
# the planner statistics on it: without them it guesses 0.5 % per condition, thinks a
# reader's filter matches one row, and sorts a whole scope by distance instead of walking
# the HNSW index).
INDEXED = ("user_id", "agent_id", "app_id", "type", "env", "run_id", "cohort", "key")
# The stored-confidence condition of compile_sql, as an expression the planner keeps
# statistics on (CREATE STATISTICS on an expression: PostgreSQL 14 or later).
CONFIDENCE = (
    "(CASE WHEN jsonb_typeof(payload->'confidence') = 'number' "
    "THEN (payload->'confidence')::float8 END)"
)


def compile_sql(where: Filter | None) -> tuple[sql.Composable, list[Any]]:
    """Our neutral :class:`Filter` as ``(condition, params)`` on the payload; ``TRUE`` for no
    filter. Not mem0's ``_build_filter_conditions``: every field is compared as
    ``payload->>'field'``, the very expressions indexed here, so the planner can use them; and
    a value is always a parameter, never spliced into the text."""
    parts: list[sql.Composable] = []
    params: list[Any] = []
    for name, test, value in where.conditions() if where else ():
        field = sql.Literal(name)
        if test == "eq":
            parts.append(sql.SQL("payload->>{} = %s").format(field))
            params.append(value)
        elif test == "in":
            parts.append(sql.SQL("payload->>{} = ANY(%s)").format(field))
            params.append(list(value))
        elif test == "has":
            # A list field (tags) matches when it holds the value, as Filter.matches says.
            parts.append(sql.SQL("(payload @> %s::jsonb OR payload @> %s::jsonb)"))
            params += [json.dumps({name: value}), json.dumps({name: [value]})]
        else:
            # Only numbers compare: a non-number never matches (and never fails the query).
            parts.append(sql.SQL(CONFIDENCE + " >= %s"))
            params.append(float(value))
    if not parts:
        return sql.SQL("TRUE"), []
    return sql.SQL(" AND ").join(parts), params


class SchemaError(RuntimeError):
    """The database cannot hold this store (an old pgvector, no extension, no rights)."""


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int("".join(filter(str.isdigit, piece)) or 0) for piece in text.split("."))


def statements(dims: int) -> list[sql.Composable]:
    """Every DDL statement, in order; each is idempotent."""

    def index(name: str, body: str) -> sql.Composable:
        return sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} " + body).format(
            sql.Identifier(f"{TABLE}_{name}"), TABLE_ID
        )

    return [
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (id UUID PRIMARY KEY, vector vector({}), payload JSONB)"
        ).format(TABLE_ID, sql.Literal(dims)),
        # A memory's row whole in the heap: pgvector's type defaults to EXTERNAL storage, and
        # Postgres moves values out of rows over ~2 kB (384 floats are 1.5 kB, the payload
        # ~0.5 kB more), so each row's vector, or with MAIN its payload, lived in the TOAST
        # table: a search of a 1,000-memory scope fetched 1,000 vectors from there (~5 of
        # its ~7.5 ms on the server), a listing 1,000 payloads. Vectors MAIN (out of line only
        # if a row could not fit a page otherwise) and rows up to 4 kB left as they are.
        # Rows written before stay as they are until written again (``executive mem
        # rebuild`` writes them all). Checked first: ALTER TABLE takes a lock that every
        # open would otherwise queue for.
        sql.SQL(
            "DO $$ BEGIN "
            "IF (SELECT attstorage FROM pg_attribute WHERE attrelid = {table}::regclass "
            "AND attname = 'vector') <> 'm' THEN "
            "ALTER TABLE {t} ALTER COLUMN vector SET STORAGE MAIN; END IF; "
            "IF NOT coalesce((SELECT {option} = ANY(reloptions) FROM pg_class "
            "WHERE oid = {table}::regclass), false) THEN "
            "ALTER TABLE {t} SET (toast_tuple_target = {target}); END IF; END $$"
        ).format(
            table=sql.Literal(TABLE),
            t=TABLE_ID,
            option=sql.Literal(f"toast_tuple_target={ROW_TARGET}"),
            target=sql.Literal(ROW_TARGET),
        ),
        # The name mem0's create_col uses, so its own IF NOT EXISTS finds ours.
        index("hnsw_idx", "USING hnsw (vector vector_cosine_ops)"),
        *(index(f"{name}_idx", f"((payload->>'{name}'))") for name in INDEXED),
        # The reader's whole filter in one index (user, app scope, agent, env, type and
        # confidence), so a scope's rows are chosen from the index alone: evaluating those
        # conditions on each heap row cost ~5 of a search's 7 ms at 1,000 rows a scope. It
        # replaces the narrower scope index, which the planner would otherwise still pick.
        sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(f"{TABLE}_scope_idx")),
        index(
            "reader_idx",
            "((payload->>'user_id'), (payload->>'app_id'), (payload->>'agent_id'), "
            f"(payload->>'env'), (payload->>'type'), {CONFIDENCE})",
        ),
        index("listing_idx", "(COALESCE(payload->>'created_at', ''), id)"),
        sql.SQL("CREATE STATISTICS IF NOT EXISTS {} ON ({}) FROM {}").format(
            sql.Identifier(f"{TABLE}_confidence_stats"), sql.SQL(CONFIDENCE), TABLE_ID
        ),
        sql.SQL(
            "CREATE UNIQUE INDEX IF NOT EXISTS {} ON {} "
            "((payload->>'user_id'), (payload->>'key')) WHERE payload ? 'key'"
        ).format(sql.Identifier(f"{TABLE}_key_uniq"), TABLE_ID),
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (id INT PRIMARY KEY CHECK (id = 1), n BIGINT NOT NULL)"
        ).format(_REVISION),
        sql.SQL("INSERT INTO {} VALUES (1, 0) ON CONFLICT (id) DO NOTHING").format(_REVISION),
        sql.SQL(
            "CREATE OR REPLACE FUNCTION executive_bump_revision() RETURNS trigger "
            "LANGUAGE plpgsql AS $$ BEGIN UPDATE {} SET n = n + 1 WHERE id = 1; RETURN NULL; END $$"
        ).format(_REVISION),
        sql.SQL(
            "CREATE OR REPLACE TRIGGER executive_revision AFTER INSERT OR UPDATE OR DELETE ON {} "
            "FOR EACH STATEMENT EXECUTE FUNCTION executive_bump_revision()"
        ).format(TABLE_ID),
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL, "
            "memory_id TEXT NOT NULL, old_memory TEXT, new_memory TEXT, event TEXT, "
            "created_at TEXT, updated_at TEXT, is_deleted INT DEFAULT 0, actor_id TEXT, role TEXT)"
        ).format(_HISTORY),
        sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (memory_id, seq)").format(
            sql.Identifier(f"{HISTORY}_memory_idx"), _HISTORY
        ),
        sql.SQL("CREATE TABLE IF NOT EXISTS {} (key TEXT PRIMARY KEY, value TEXT NOT NULL)").format(
            _META
        ),
    ]


_PGVECTOR = "SELECT extversion FROM pg_extension WHERE extname = 'vector'"


def migrate(conn: Any, dims: int) -> str:
    """Create what is missing, once, under the advisory lock; returns pgvector's version."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_ID,))
        row = conn.execute(_PGVECTOR).fetchone()
        if row is None:
            try:
                with conn.transaction():  # a savepoint: a refusal leaves the lock held
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except Exception as exc:
                raise SchemaError(
                    "the pgvector extension is not installed in this database and this role "
                    f"cannot create it ({exc}); run `CREATE EXTENSION vector;` as its owner"
                ) from exc
            row = conn.execute(_PGVECTOR).fetchone()
        version = str(row[0])
        if version_tuple(version) < MIN_PGVECTOR:
            raise SchemaError(
                f"pgvector {version} is too old: filtered search needs iterative index scans "
                "(pgvector 0.8.0 or later); run `ALTER EXTENSION vector UPDATE;`"
            )
        for statement in statements(dims):
            conn.execute(statement)
    return version


def recorded_embedder(conn: Any) -> dict[str, Any] | None:
    rows = dict(conn.execute(sql.SQL("SELECT key, value FROM {}").format(_META)))
    if "embedder" not in rows:
        return None
    return {"name": rows["embedder"], "dims": int(rows.get("dims", "0"))}


def record_embedder(conn: Any, name: str, dims: int) -> None:
    for key, value in (("embedder", name), ("dims", str(dims))):
        conn.execute(
            sql.SQL(
                "INSERT INTO {} VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = "
                "excluded.value"
            ).format(_META),
            (key, value),
        )


def revision(conn: Any) -> int:
    row = conn.execute(sql.SQL("SELECT n FROM {} WHERE id = 1").format(_REVISION)).fetchone()
    return int(row[0]) if row else 0


def truncate(conn: Any) -> None:
    """Empty the store, keeping every index and the trigger (mem0's reset() drops them)."""
    conn.execute(sql.SQL("TRUNCATE {}, {}").format(TABLE_ID, _HISTORY))
    conn.execute(sql.SQL("UPDATE {} SET n = n + 1 WHERE id = 1").format(_REVISION))


def delete_user(conn: Any, user_id: str) -> int:
    """Delete one installation's memories and their history; every other row stays.

    Executives of other installations share the table: a rebuild of one must never empty it
    (``truncate`` is for a store that is this installation's alone). The history of a memory
    deleted before is kept: its rows name no installation.
    """
    row = conn.execute(
        sql.SQL(
            "WITH gone AS (DELETE FROM {} WHERE payload->>'user_id' = %s RETURNING id::text AS id), "
            "history AS (DELETE FROM {} WHERE memory_id IN (SELECT id FROM gone)) "
            "SELECT count(*) FROM gone"
        ).format(TABLE_ID, _HISTORY),
        (user_id,),
    ).fetchone()
    return int(row[0])


def others_stored(conn: Any, user_id: str) -> int:
    """How many memories of other installations the table holds."""
    row = conn.execute(
        sql.SQL("SELECT count(*) FROM {} WHERE payload->>'user_id' IS DISTINCT FROM %s").format(
            TABLE_ID
        ),
        (user_id,),
    ).fetchone()
    return int(row[0])
