"""The memory of one process: a store opened on first use, the ledger, the two doors.

Opening the store loads mem0 and the ONNX embedding model (under a second, ~100 MB), so
nothing opens it until something actually reads or writes: a hook that is off, or an idle
iteration, never does.
"""

from __future__ import annotations

from datetime import UTC, datetime

import anyio

from executive.home import Home
from executive.logs import get_logger
from executive.memory.durability.shared import Member, SharedLedgers, member
from executive.memory.health import pending_writes
from executive.memory.store.backends import BACKENDS
from executive.memory.store.base import (
    Filter,
    ReadView,
    Store,
    StoreError,
    missing,
    prepare,
    words,
)
from executive.memory.write.envelope import Defaults
from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import HarvestLedger, LedgerSource
from executive.settings import Settings

# Embedded at start-up to load the model (the answer is never read).
WARM_QUESTION = "What have I learned?"

log = get_logger(__name__)


async def open_store(settings: Settings) -> Store:
    """The configured backend, from the one table of backends."""
    return await BACKENDS[settings.store_backend](settings)


class MemoryRuntime:
    def __init__(self, settings: Settings, store: Store | None = None) -> None:
        self.settings = settings
        self.home = Home(settings.home)
        self.ledger = HarvestLedger(self.home.harvest_runs)
        self._store = store
        self._harvester: Harvester | None = None
        self._lock = anyio.Lock()

    @property
    def defaults(self) -> Defaults:
        s = self.settings
        return Defaults(user_id=s.user_id, env=s.env, cohort=s.cohort, executive=s.executive)

    @property
    def opened(self) -> bool:
        return self._store is not None

    async def store(self) -> Store:
        async with self._lock:
            if self._store is None:
                try:
                    self._store = await open_store(self.settings)
                except StoreError:
                    raise
                except Exception as exc:
                    raise StoreError(
                        f"cannot open the {self.settings.store_backend} store: {exc}"
                    ) from exc
                for lack in missing(self._store):
                    log.warning(
                        "store.lacks", backend=self._store.name, power=lack.name, so=lack.without
                    )
        return self._store

    async def warm(self) -> int:
        """Build the store's word index and load the embedding model now (the daemon's start),
        not on a bundle's first pack; returns how many memories the index holds for this user
        above the floor. Loading the model before READY also lets start-up hand back what
        loading it left freed (``daemon/heap.py``)."""
        settings = self.settings
        view = await self.view()
        await prepare(view, [WARM_QUESTION])
        index = await words(
            view,
            [Filter(user_id=settings.user_id)],
            settings.confidence_floor,
            datetime.now(UTC),
        )
        return 0 if index is None else index.n

    async def view(self) -> ReadView:
        """The reader's door: reads only."""
        return ReadView(await self.store())

    async def harvester(self) -> Harvester:
        """The writer's door: the one object that may write."""
        store = await self.store()
        if self._harvester is None:
            self._harvester = Harvester(
                store,
                self.ledger,
                self.defaults,
                timeout_seconds=self.settings.store_timeout_seconds,
            )
        return self._harvester

    def members(self) -> list[Member]:
        """This executive, then every peer home that shares its store (EXECUTIVE_PEER_HOMES)."""
        me = Member(self.home.root, self.settings.executive, tuple(self.settings.spec_file_list))
        peers = [p for p in self.settings.peer_home_list if p != self.home.root]
        return [me, *(member(p) for p in peers)]

    def ledgers(self) -> LedgerSource:
        """What rebuild and drift compare the store with: this home's ledger or, when other
        executives share the store (EXECUTIVE_PEER_HOMES), the union of every home's."""
        members = self.members()
        return self.ledger if len(members) == 1 else SharedLedgers(members)

    def pending_writes(self) -> int:
        return pending_writes(self.ledger)

    async def close(self) -> None:
        async with self._lock:
            if self._store is not None:
                await self._store.close()
                self._store = None
                self._harvester = None
