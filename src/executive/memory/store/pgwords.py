"""The Postgres store's word index: kept app by app, from what moved since it last looked.

Other executives write to the same table, so this process does not see every write; the
store's revision (a trigger) says that something moved, not what. Each row's ``xmin`` does:
Postgres gives every new version of a row a new one. So when a request names an app whose
part of the index is older than the store's revision, its rows' ids and ``xmin`` are read
(no payloads, no vectors), compared with what the index holds, and only the rows added or
changed are fetched and tokenised; rows gone leave the index. Read in one REPEATABLE READ
snapshot with the revision, so a part is exactly the table at that revision. A request that
names no app (every app) brings every part up to date.

Reads only: nothing here writes to the database.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg import sql

from executive.memory.read.scope_index import ScopedIndex
from executive.memory.store import pgschema
from executive.memory.store.base import Filter
from executive.memory.store.records import record_from_payload
from executive.memory.store.wordindex import WordIndex

_FETCH = 1000  # payloads per round trip
_EVERY = object()  # the key of "every app is current"


class PgWords:
    def __init__(self) -> None:
        self.index = WordIndex()
        self._versions: dict[str | None, dict[str, str]] = {}  # app -> id -> xmin
        self._synced: dict[object, int] = {}  # app (or _EVERY) -> revision
        self._lock = threading.Lock()

    def view(
        self, conn: Any, wheres: Sequence[Filter], floor: float, now: datetime
    ) -> ScopedIndex | None:
        """The request's index, every app it names brought to the store's revision first.
        ``conn``: a connection outside any transaction (a snapshot is opened when a part
        must be brought up to date)."""
        every = any(not where.app_ids for where in wheres)
        apps = sorted({app for where in wheres for app in where.app_ids})
        with self._lock:
            revision = pgschema.revision(conn)
            stale = (
                self._synced.get(_EVERY) != revision
                if every
                else any(self._synced.get(app) != revision for app in apps)
            )
            if stale:  # BEGIN even in autocommit: the revision and rows from one snapshot
                with conn.transaction():
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                    revision = pgschema.revision(conn)
                    if every:
                        self._sync_apps(conn, None, revision)
                        self._synced[_EVERY] = revision
                    else:
                        stale_apps = [a for a in apps if self._synced.get(a) != revision]
                        self._sync_apps(conn, stale_apps, revision)
            return self.index.view(wheres, floor, now)

    def _sync_apps(self, conn: Any, apps: list[str] | None, revision: int) -> None:
        """Bring ``apps`` (None: every app, those gone included) to the table at ``revision``:
        every row's id and ``xmin`` read in one statement."""
        where = sql.SQL("TRUE" if apps is None else "payload->>'app_id' = ANY(%s)")
        rows = conn.execute(
            sql.SQL("SELECT id::text, xmin::text, payload->>'app_id' FROM {} WHERE {}").format(
                pgschema.TABLE_ID, where
            ),
            [] if apps is None else [apps],
        ).fetchall()
        by_app: dict[str | None, dict[str, str]] = {
            app: {} for app in (self._versions if apps is None else apps)
        }
        for memory_id, version, app in rows:
            by_app.setdefault(app, {})[memory_id] = version
        for app, current in by_app.items():
            self._sync(conn, app, current, revision)

    def _sync(self, conn: Any, app: str | None, current: dict[str, str], revision: int) -> None:
        """Make ``app``'s part what ``current`` (id -> xmin, read at ``revision``) says."""
        held = self._versions.get(app, {})
        for memory_id in held.keys() - current.keys():
            if self.index.app_of(memory_id) == app:  # not moved to an app synced already
                self.index.remove(memory_id)
        changed = [i for i, version in current.items() if held.get(i) != version]
        records = []
        for start in range(0, len(changed), _FETCH):
            rows = conn.execute(pgschema.BY_IDS, [changed[start : start + _FETCH]]).fetchall()
            records += [record_from_payload(memory_id, payload) for memory_id, payload in rows]
        self.index.put(records)  # at once: an app's first sync lays its part out once
        self._versions[app] = current
        self._synced[app] = revision
