"""One interface over every backend: records, a neutral filter, the read view, write receipts.

The reader is handed a :class:`ReadView` and nothing else; only the harvester and the
rebuild tools hold a :class:`Store`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from executive.dates import parse_instant


class StoreError(RuntimeError):
    """The store failed or could not be reached. The message says which call and why."""


class StoreUnavailable(StoreError):
    """The store's server does not answer (down, unreachable, refusing connections): its data
    is not in question, so the fix is to start or reach the server, never to rebuild."""


class MemoryRecord(BaseModel):
    """A memory as a store returns it, whatever the backend."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    user_id: str | None = None
    agent_id: str | None = None
    app_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = {}
    created_at: str | None = None
    updated_at: str | None = None
    score: float | None = None

    @property
    def type(self) -> str:
        return str(self.metadata.get("type", ""))

    @property
    def key(self) -> str | None:
        value = self.metadata.get("key")
        return value if isinstance(value, str) else None

    @property
    def confidence(self) -> float | None:
        value = self.metadata.get("confidence")
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )

    @property
    def source(self) -> str:
        return str(self.metadata.get("source", ""))

    def expired(self, now: datetime | None = None) -> bool:
        when = parse_instant(self.metadata.get("expires_at"))
        return when is not None and when <= (now or datetime.now(UTC))

    def with_score(self, score: float | None) -> MemoryRecord:
        return MemoryRecord.stored({**self.__dict__, "score": score})

    @classmethod
    def stored(cls, values: dict[str, Any]) -> MemoryRecord:
        """A record of every field in ``values``, unvalidated: what a store returns, which our
        own writes validated. Hot (a scope's first listing makes a thousand, each search a
        hundred), so it sets what ``model_construct`` sets without its per-field pass over
        defaults (~2 µs against ~10); ``tests/memory/store/test_records.py`` fails if a
        pydantic release changes what that is."""
        record = cls.__new__(cls)
        object.__setattr__(record, "__dict__", values)
        # One set for every stored record (a frozen model never changes its own; a copy
        # gets a copy): a set apiece was ~7 MB of 10,000 cached records.
        object.__setattr__(record, "__pydantic_fields_set__", _ALL_FIELDS_SET)
        object.__setattr__(record, "__pydantic_extra__", None)
        object.__setattr__(record, "__pydantic_private__", None)
        return record


_ALL_FIELDS_SET = set(MemoryRecord.model_fields)


@dataclass(frozen=True)
class Filter:
    """What to match, in the store's neutral terms; each backend compiles it its own way.

    ``app_ids`` and ``types`` are alternatives (OR); every other field must hold (AND).
    ``min_confidence`` applies to the stored ``confidence``, never to the search score.
    """

    user_id: str | None = None
    agent_id: str | None = None
    app_ids: tuple[str, ...] = ()
    run_id: str | None = None
    types: tuple[str, ...] = ()
    env: str | None = None
    cohort: str | None = None
    key: str | None = None
    min_confidence: float | None = None
    metadata: tuple[tuple[str, str], ...] = field(default=())

    def narrowed(self, **changes: Any) -> Filter:
        return replace(self, **changes)

    def conditions(self) -> Iterator[tuple[str, str, Any]]:
        """The filter as ``(field, test, value)`` conditions that must all hold, in the one
        order every backend compiles: ``eq``, ``in`` (several values), ``has`` (an extra
        metadata pair: a list field holding the value matches) and ``gte`` (confidence)."""
        for name in ("user_id", "agent_id", "run_id"):
            if getattr(self, name) is not None:
                yield name, "eq", getattr(self, name)
        for name, values in (("app_id", self.app_ids), ("type", self.types)):
            if values:
                yield (name, "eq", values[0]) if len(values) == 1 else (name, "in", values)
        for name in ("env", "cohort", "key"):
            if getattr(self, name) is not None:
                yield name, "eq", getattr(self, name)
        for name, value in self.metadata:
            yield name, "has", value
        if self.min_confidence is not None:
            yield "confidence", "gte", self.min_confidence

    def matches(self, record: MemoryRecord) -> bool:
        """The same predicate in Python: for backends that cannot evaluate part of it."""
        return all(_holds(record, *condition) for condition in self.conditions())


def _holds(record: MemoryRecord, name: str, test: str, value: Any) -> bool:
    if test == "gte":
        confidence = record.confidence
        return confidence is not None and confidence >= value
    on_record = test != "has" and name in ("user_id", "agent_id", "run_id", "app_id")
    stored = getattr(record, name) if on_record else record.metadata.get(name)
    if test == "in":
        return stored in value
    # A list field (tags) matches when it holds the value, as Qdrant's match does.
    return value in stored if test == "has" and isinstance(stored, list) else stored == value


@dataclass(frozen=True)
class NewMemory:
    """One memory to write: text, the three id scope (user, agent, run), stored metadata."""

    text: str
    scope: dict[str, str]
    metadata: dict[str, Any]
    created_at: str | None = None
    # A rebuild keeps the id the memory had and replays its history (ADD, then each text
    # UPDATE, from the ledger). Stores that cannot choose ids (the Platform) ignore both.
    memory_id: str | None = None
    history: tuple[dict[str, Any], ...] = ()

    def require_new(self) -> NewMemory:
        """This memory as ``Store.add`` takes it: a new one. An id or a history to keep is a
        rebuild's, which only ``add_many`` honours: refused here, never silently dropped."""
        if self.memory_id is not None or self.history:
            raise ValueError(
                "Store.add writes a new memory under an id the store chooses; a memory_id or "
                "a history to keep goes through add_many (a rebuild)"
            )
        return self


@dataclass(frozen=True)
class WriteReceipt:
    """What the store said about one write. Only ``confirmed`` writes count as done."""

    # SUCCEEDED | FAILED | CANCELLED | TIMEOUT | ERROR, or DUPLICATE: the store's own unique
    # key refused the write and ``memory_id`` names the memory it already holds.
    status: str
    memory_id: str | None = None
    event_id: str | None = None
    error: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def confirmed(self) -> bool:
        return self.status == "SUCCEEDED" and self.memory_id is not None


@runtime_checkable
class Words(Protocol):
    """A store's word index as one request sees it (the memories its filters admit): BM25
    over them and their word statistics (``executive.memory.read.scope_index.ScopedIndex``)."""

    df: object
    n: int

    def share(self, term: str) -> float: ...

    def idf(self, term: str) -> float: ...

    def search(
        self, query_terms: Sequence[str], top_k: int, weights: dict[str, float] | None = None
    ) -> list[str]: ...

    def get(self, memory_id: str) -> MemoryRecord | None: ...

    def records(self) -> Iterator[MemoryRecord]: ...


class StoreReader(Protocol):
    async def search(self, query: str, where: Filter, top_k: int) -> list[MemoryRecord]: ...

    async def get(self, memory_id: str) -> MemoryRecord | None: ...

    async def history(self, memory_id: str) -> list[dict[str, Any]]: ...

    async def list(self, where: Filter | None = None) -> list[MemoryRecord]: ...

    async def count(self, where: Filter | None = None) -> int: ...

    async def revision(self) -> int | None:
        """A number that changes with every write, or None when the store cannot say."""
        ...


@runtime_checkable
class Store(StoreReader, Protocol):
    """A backend. Write methods are for the harvester and the rebuild tools only."""

    name: str

    async def add(self, item: NewMemory) -> WriteReceipt:
        """One new memory, its id the store's choice (:meth:`NewMemory.require_new`)."""
        ...

    async def update(
        self, memory_id: str, *, text: str | None = None, metadata: dict[str, Any] | None = None
    ) -> None: ...

    async def delete(self, memory_id: str) -> None: ...

    async def wipe(self, user_id: str | None = None) -> None:
        """Delete every memory of ``user_id`` (one installation's), or with None every memory.

        A store may be shared (Postgres, a Qdrant server, the Platform): a wipe for one
        installation never touches another's memories or their history.
        """
        ...

    async def close(self) -> None: ...


class ReadView:
    """The read-only face of a store: the only thing the reader ever receives."""

    __slots__ = ("__store",)

    def __init__(self, store: StoreReader) -> None:
        self.__store = store

    async def search(self, query: str, where: Filter, top_k: int) -> list[MemoryRecord]:
        return await self.__store.search(query, where, top_k)

    async def get(self, memory_id: str) -> MemoryRecord | None:
        return await self.__store.get(memory_id)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        return await self.__store.history(memory_id)

    async def list(self, where: Filter | None = None) -> list[MemoryRecord]:
        return await self.__store.list(where)

    async def count(self, where: Filter | None = None) -> int:
        return await self.__store.count(where)

    async def revision(self) -> int | None:
        return await self.__store.revision()

    async def search_scopes(
        self, query: str, wheres: Sequence[Filter], top_k: int
    ) -> list[list[MemoryRecord]]:
        return await search_scopes(self.__store, query, wheres, top_k)

    async def prepare(self, queries: Sequence[str]) -> None:
        await prepare(self.__store, queries)

    async def words(self, wheres: Sequence[Filter], floor: float, now: datetime) -> Words | None:
        return await words(self.__store, wheres, floor, now)


# A store's optional powers. A backend that has one does the work once (one embedding per
# question across scopes, one batch for the planned questions, a word index kept as it
# writes); any other gets the same answers the slow way, or (words) none. Declared here, so a
# backend says what it can by its methods and nothing outside the store's door asks which
# backend it is.


@runtime_checkable
class SearchesScopes(Protocol):
    async def search_scopes(
        self, query: str, wheres: Sequence[Filter], top_k: int
    ) -> list[list[MemoryRecord]]: ...


@runtime_checkable
class Prepares(Protocol):
    async def prepare(self, queries: Sequence[str]) -> None: ...


@runtime_checkable
class KeepsWords(Protocol):
    async def words(
        self, wheres: Sequence[Filter], floor: float, now: datetime
    ) -> Words | None: ...


@dataclass(frozen=True)
class Capability:
    """An optional power, and what a pack loses on a store without it."""

    name: str
    protocol: type
    without: str


CAPABILITIES = (
    Capability(
        "search_scopes",
        SearchesScopes,
        "each scope is searched on its own (a question is embedded once a scope): slower, "
        "same memories",
    ),
    Capability(
        "prepare",
        Prepares,
        "the planned questions are embedded one at a time, not in one batch: slower, same memories",
    ),
    Capability(
        "words",
        KeepsWords,
        "no keyword pass: memories are found by meaning alone, so a file or function the "
        "goal names ranks no higher for being named",
    ),
)


def missing(store: object) -> list[Capability]:
    """The optional powers ``store`` lacks (empty: it has them all)."""
    return [c for c in CAPABILITIES if not isinstance(store, c.protocol)]


async def search_scopes(
    view: StoreReader, query: str, wheres: Sequence[Filter], top_k: int
) -> list[list[MemoryRecord]]:
    """One question against several filters: one result list per filter, in order."""
    if isinstance(view, SearchesScopes):
        return list(await view.search_scopes(query, wheres, top_k))
    return [await view.search(query, where, top_k) for where in wheres]


async def prepare(view: StoreReader, queries: Sequence[str]) -> None:
    """Tell the backend which questions are coming, so it can embed them in one batch."""
    if isinstance(view, Prepares):
        await view.prepare(list(queries))


async def words(
    view: StoreReader, wheres: Sequence[Filter], floor: float, now: datetime
) -> Words | None:
    """The store's word index for a request that searches ``wheres``: the memories each
    admits at ``floor``, unexpired at ``now`` (:mod:`executive.memory.store.wordindex`); None
    when the store keeps none."""
    return await view.words(list(wheres), floor, now) if isinstance(view, KeepsWords) else None
