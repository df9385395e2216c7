"""Is the store there, and does it hold what the ledgers say: one answer for every surface.

The start-up line, ``executive status`` (and ``--probe``), ``executive doctor``, ``/healthz``
and ``/metrics`` all ask :func:`check`, so they say the same thing the same way: the store
answers; it answers but holds fewer of this installation's memories than the harvest ledgers
confirm (its folder was lost, or it was wiped: the fix is a rebuild from the ledgers); or it
does not answer, with the cause (a database that is down is started, never rebuilt: a rebuild
would wipe rows the store still holds).

The ledgers' count (and the pending writes') is one fold of the harvest ledger, cached while
its files are unchanged, so a scrape every 15 seconds costs a few ``stat`` calls.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import anyio

from executive.memory.store.base import Filter, StoreReader, StoreUnavailable
from executive.memory.write.ledger import HarvestLedger
from executive.settings import Settings
from executive.untrusted import one_line

# A store call made to tell health: bounded well inside a probe's patience.
ANSWER_SECONDS = 15.0

REBUILD_FIX = (
    "executive --home HOME mem rebuild (writes every memory the harvest ledgers hold back "
    "into the store)"
)

State = Literal["ok", "short", "down", "error"]


@dataclass(frozen=True)
class StoreHealth:
    state: State
    detail: str
    fix: str = ""
    total: int | None = None  # this installation's memories in the store
    expected: int | None = None  # the memories the ledgers confirm the store holds

    @property
    def ok(self) -> bool:
        return self.state == "ok"

    @property
    def missing(self) -> int | None:
        """How many memories the store lacks (0 when it holds them all; None: unknown)."""
        if self.total is None or self.expected is None:
            return None
        return max(0, self.expected - self.total)

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "ok": self.ok, "missing": self.missing}


def down_fix(settings: Settings) -> str:
    """What to do about a store that does not answer, by backend: never a rebuild."""
    if settings.store_backend == "postgres":
        return (
            "start the database server (or correct EXECUTIVE_STORE_URL); nothing is lost "
            "meanwhile: writes wait in the harvest ledger and are replayed"
        )
    if settings.store_backend == "platform":
        return "check the network and the mem0 Platform's status; writes are replayed"
    return "see the daemon's log (grep store.); executive --home HOME doctor"


@dataclass(frozen=True)
class _Tally:
    """What health asks of one fold of the harvest ledger."""

    live: Counter[str | None]  # confirmed live memories, by owner (user_id)
    pending: int  # writes the store never confirmed


_cache: dict[Path, tuple[tuple[tuple[str, int, int], ...], _Tally]] = {}


def _tally(ledger: HarvestLedger) -> _Tally:
    """One fold of the ledger, kept while its files' names, sizes and times are unchanged."""
    files = ledger.files()
    signature = tuple((p.name, (st := p.stat()).st_size, st.st_mtime_ns) for p in files)
    cached = _cache.get(ledger.folder)
    if cached is None or cached[0] != signature:
        state = ledger.state()
        live = state.live().values()
        counts = Counter(
            s.payload.get("user_id") for s in live if s.confirmed and s.payload is not None
        )
        cached = _cache[ledger.folder] = (signature, _Tally(counts, len(state.pending())))
    return cached[1]


def confirmed_live(ledger: HarvestLedger, user_id: str | None) -> int:
    """Memories of ``user_id`` the ledger says the store holds: live, and confirmed (a write
    still pending may be missing from the store by right: it is replayed)."""
    counts = _tally(ledger).live
    # No installation id: the store is counted whole, and so is the ledger.
    return sum(counts.values()) if user_id is None else counts.get(user_id, 0)


def pending_writes(ledger: HarvestLedger) -> int:
    """Writes the store never confirmed, to be replayed: every ``/metrics`` scrape asks."""
    return _tally(ledger).pending


def describe(exc: BaseException) -> str:
    """An error as one line that always says something (a bare TimeoutError says nothing)."""
    if isinstance(exc, TimeoutError) and not str(exc):
        return f"no answer within {ANSWER_SECONDS:g} s"
    text = one_line(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def check(settings: Settings, store: StoreReader, ledger: HarvestLedger) -> StoreHealth:
    """Ask the store for this installation's count (bounded) and hold it against the ledger."""
    try:
        with anyio.fail_after(ANSWER_SECONDS):
            total = await store.count(Filter(user_id=settings.user_id))
    except StoreUnavailable as exc:
        # "count: the Postgres server at … does not answer: <cause>": said once, no call name.
        said = one_line(str(exc)).split(": ", 1)[-1]
        return StoreHealth("down", said, down_fix(settings))
    except Exception as exc:
        down = isinstance(exc, TimeoutError)
        return StoreHealth(
            "down" if down else "error",
            f"the {settings.store_backend} store does not answer: {describe(exc)}",
            down_fix(settings) if down else "see the daemon's log; executive --home HOME doctor",
        )
    try:
        expected = await anyio.to_thread.run_sync(confirmed_live, ledger, settings.user_id)
    except (OSError, ValueError) as exc:
        return StoreHealth(
            "ok", f"answers ({total} memories; ledgers unreadable: {describe(exc)})", total=total
        )
    if total < expected:
        return StoreHealth(
            "short",
            f"the {settings.store_backend} store holds {total} memories but the harvest "
            f"ledgers confirm {expected}: {expected - total} are missing (its folder lost or "
            "the store wiped?)",
            REBUILD_FIX,
            total,
            expected,
        )
    return StoreHealth("ok", f"answers ({total} memories)", total=total, expected=expected)


def folder_lost(settings: Settings, store_dir: Path, ledger: HarvestLedger) -> StoreHealth | None:
    """Without opening anything: the embedded store's folder is gone while the ledgers hold
    memories (the files' view of ``status`` and a start-up before the store opens)."""
    if not settings.store_in_home or store_dir.exists():
        return None
    expected = confirmed_live(ledger, settings.user_id)
    if expected == 0:
        return None
    return StoreHealth(
        "short",
        f"the embedded store's folder {store_dir} is missing but the harvest ledgers confirm "
        f"{expected} memories",
        REBUILD_FIX,
        0,
        expected,
    )


def database(settings: Settings) -> StoreHealth | None:
    """The Postgres store's server (``doctor``): it answers, with pgvector 0.8.0 or later
    (iterative index scans); None for another backend. Bounded: ``pgpool.CONNECT_SECONDS``."""
    if settings.store_backend != "postgres" or settings.store_url is None:
        return None
    from executive.memory.store.pgpool import CONNECT_SECONDS, probe, redacted
    from executive.memory.store.pgschema import MIN_PGVECTOR, version_tuple

    url = settings.store_url.get_secret_value()
    try:
        found = probe(url, timeout=CONNECT_SECONDS)
    except Exception as exc:
        said = f"the database server at {redacted(url)} does not answer: {describe(exc)}"
        fix = down_fix(settings) + "; `psql` with the same URL shows the same error"
        return StoreHealth("down", said, fix)
    where = f"PostgreSQL {found['server']} at {redacted(url)}" + (", TLS" if found["tls"] else "")
    version = found["pgvector"] or found["pgvector_available"]
    if version is None:
        said = f"{where}: the pgvector extension is not available"
        return StoreHealth("error", said, "install pgvector on the server")
    if version_tuple(version) < MIN_PGVECTOR:
        wanted = ".".join(map(str, MIN_PGVECTOR))
        old = f"{where}: pgvector {version} is older than {wanted} (iterative index scans)"
        return StoreHealth("error", old, "ALTER EXTENSION vector UPDATE;")
    state = "installed" if found["pgvector"] else "available, created on first start"
    return StoreHealth("ok", f"{where}: pgvector {version} ({state})")
