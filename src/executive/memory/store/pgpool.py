"""Connecting to the Postgres store: the pool, the URL as it may be logged, vectors as text.

The URL is a secret (it carries the password): only :func:`redacted` forms reach a log.
The pool is ours, handed to mem0 as ``connection_pool`` (``postgres-store.md`` §6): mem0's
default has no health check, so after a server restart its next call fails.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg.abc import Buffer
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import JsonbBinaryLoader, JsonbLoader
from psycopg_pool import ConnectionPool

from executive.untrusted import one_line

# How long a connection may take to open, and a call may wait for one from the pool: a
# server that is down is reported in seconds, with its cause, not after the call's own limit.
CONNECT_SECONDS = 5.0


def redacted(url: str) -> str:
    """The URL with its password (and any password parameter) replaced: safe to log."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        name = user.split(":", 1)[0]
        netloc = f"{name}:***@{host}" if ":" in user else f"{name}@{host}"
    query = "&".join(
        f"{k}=***" if k.lower() == "password" else f"{k}={v}" if sep else k
        for k, sep, v in (p.partition("=") for p in parts.query.split("&") if p)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def vector_text(values: Sequence[float]) -> str:
    """pgvector's text form: the server parses it as a vector, no array cast on the way."""
    return "[" + ",".join(f"{v:.7g}" for v in values) + "]"


class _JsonbText(JsonbLoader):
    """jsonb as psycopg reads it, decoded to text straight from its buffer. psycopg's own
    loaders copy each value to ``bytes`` and have ``json`` find its encoding: ~5 µs a payload
    more, 5 ms of a 1,000-memory scope's first listing. The same dicts come out."""

    def load(self, data: Buffer) -> Any:
        return json.loads(str(data, "utf-8"))


class _JsonbBinary(JsonbBinaryLoader):
    def load(self, data: Buffer) -> Any:
        if data and data[0] != 1:
            raise psycopg.DataError(f"unknown jsonb binary format: {data[0]}")
        return json.loads(str(data[1:], "utf-8"))


def _configure(conn: psycopg.Connection[Any]) -> None:
    conn.adapters.register_loader("jsonb", _JsonbText)
    conn.adapters.register_loader("jsonb", _JsonbBinary)


def make_pool(url: str, *, size: int = 4, timeout: float = 30.0) -> ConnectionPool:
    """A pool that survives a server restart and sets what every search needs."""
    # The URL's own options (a search_path, say) are kept: ours are added to them.
    given = conninfo_to_dict(url).get("options") or ""
    options = f"{given} -c hnsw.iterative_scan=relaxed_order".strip()
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=size,
        timeout=min(timeout, CONNECT_SECONDS),
        # A connection attempt backs off (1, 2, 4 s...) and, by default, for 5 minutes: a
        # server back after a minute down would wait up to a minute more for the pool's next
        # try. Given up after 10 s, the next call starts a fresh attempt at once.
        reconnect_timeout=2 * CONNECT_SECONDS,
        check=ConnectionPool.check_connection,
        configure=_configure,
        kwargs={
            "options": options,
            "prepare_threshold": None,
            "connect_timeout": max(1, round(min(timeout, CONNECT_SECONDS))),
        },
        name="executive-store",
        open=False,
    )
    pool.open(wait=False)  # never blocks: the first call waits (bounded) for a connection
    return pool


def why_unreachable(pool: ConnectionPool) -> str:
    """What a direct connection to the pool's server says now: the cause behind a pool that
    lends no connection (the pool's own timeout names none). Empty when it connects."""
    try:
        with psycopg.connect(pool.conninfo, connect_timeout=round(CONNECT_SECONDS)):
            return ""
    except Exception as exc:
        return one_line(str(exc)) or type(exc).__name__


def probe(url: str, timeout: float = CONNECT_SECONDS) -> dict[str, Any]:
    """What ``executive doctor`` reports: the server, pgvector (installed or available), TLS."""
    with psycopg.connect(url, connect_timeout=max(1, round(timeout)), autocommit=True) as conn:
        installed = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        available = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        return {
            "server": conn.info.parameter_status("server_version"),
            "pgvector": installed[0] if installed else None,
            "pgvector_available": available[0] if available else None,
            "tls": bool(conn.info.pgconn.ssl_in_use),
        }
