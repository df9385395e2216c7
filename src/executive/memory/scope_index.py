"""The reader's BM25 over the scopes it searches: one index per scope and store revision.

Every pack searches a project scope and the global one, and every bundle shares the global
scope. Indexed per scope, each scope is listed and indexed once per store revision, and every
request that names it reuses it: a pack for another bundle builds only its project's index,
a write rebuilds only the scopes asked for next. A request's index is the union of its
scopes' indexes, scored with the union's statistics (document frequencies, count, mean
length), so it returns what one index built over all those memories together returns: the
same memories in the same order, the same floats. Scopes that share a memory (the planned
scopes never do) get that one index instead.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from datetime import datetime
from itertools import accumulate

from executive.memory.lexical import LexicalIndex, Scores, WordStatistics
from executive.memory.ranking import admissible
from executive.memory.store.base import Filter, MemoryRecord, StoreReader

Key = tuple[Hashable, ...]


class IndexCache:
    """Lexical indexes of one store revision, by scope; a write makes them all stale.

    The harvester is the only writer, and every write bumps the embedded store's revision,
    so an index stays valid until the next harvest. Stores that cannot say their revision
    (the Platform) get no cached index. Least recently used out first, past ``SIZE``: enough
    for every scope of a few dozen bundles, so a round of packs over them rebuilds nothing.
    """

    SIZE = 64

    def __init__(self) -> None:
        self._revision: Hashable = None
        self._indexes: OrderedDict[Key, LexicalIndex] = OrderedDict()

    def get(self, revision: Hashable, key: Key) -> LexicalIndex | None:
        if revision != self._revision:
            return None
        found = self._indexes.get(key)
        if found is not None:
            self._indexes.move_to_end(key)
        return found

    def put(self, revision: Hashable, key: Key, index: LexicalIndex) -> None:
        if revision != self._revision:
            self._indexes.clear()  # another revision: every index is stale
            self._revision = revision
        self._indexes[key] = index
        self._indexes.move_to_end(key)
        while len(self._indexes) > self.SIZE:
            self._indexes.popitem(last=False)


class _Frequencies:
    """The union's document frequencies, summed on demand: the reader reads a few words'."""

    def __init__(self, parts: Sequence[LexicalIndex]) -> None:
        self._parts = parts

    def get(self, term: str, default: int = 0) -> int:
        total = sum(part.df.get(term, 0) for part in self._parts)
        return total if total else default


class ScopedIndex(WordStatistics):
    """Disjoint scope indexes searched as one index over all their memories."""

    def __init__(self, parts: Sequence[LexicalIndex]) -> None:
        self.parts = tuple(parts)
        self.records: dict[str, MemoryRecord] = {}
        for part in self.parts:  # a copy of references at C speed, for fast lookups
            self.records.update(part.records)
        self.df = _Frequencies(self.parts)
        self.n = sum(part.n for part in self.parts)
        # Integer sums, so the mean is the very float one index over everything computes.
        total = sum(part.total_length for part in self.parts)
        self._average = total / self.n if self.n else 1.0
        self._offsets = [0, *accumulate(part.n for part in self.parts)][:-1]

    def search(
        self, query_terms: Sequence[str], top_k: int, weights: dict[str, float] | None = None
    ) -> list[str]:
        # LexicalIndex.search over the union: positions run on from one scope to the next,
        # in scope order, as one index's would; each memory adds its terms in query order.
        scores = Scores(self.n)
        for term in dict.fromkeys(query_terms):
            if self.df.get(term, 0):
                idf = self.idf(term) * (weights.get(term, 1.0) if weights else 1.0)
                for part, offset in zip(self.parts, self._offsets, strict=True):
                    part.add_scores(scores, term, idf, self._average, offset)
        return [self._id(position) for position in scores.best(top_k)]

    def _id(self, position: int) -> str:
        which = bisect.bisect_right(self._offsets, position) - 1
        return self.parts[which].ids[position - self._offsets[which]]


def _disjoint(parts: Sequence[LexicalIndex]) -> bool:
    return all(
        a.records.keys().isdisjoint(b.records.keys())
        for i, a in enumerate(parts)
        for b in parts[i + 1 :]
    )


async def scope_index(
    view: StoreReader,
    cache: IndexCache,
    wheres: Sequence[Filter],
    floor: float,
    now: datetime | None,
) -> ScopedIndex | LexicalIndex | None:
    """BM25 over the memories of each filter (one per scope) that are admissible at ``floor``;
    None when the store cannot say its revision."""
    revision = await view.revision()
    if revision is None:
        return None
    parts = []
    for where in wheres:
        # Keyed by what selects the memories, not by the scope's name: two consumers that
        # name the same scope differently share its index.
        part = cache.get(revision, (floor, where))
        if part is None:
            listed = await view.list(where)
            part = LexicalIndex(r for r in listed if admissible(r, floor, now))
            cache.put(revision, (floor, where), part)
        parts.append(part)
    if _disjoint(parts):
        return ScopedIndex(parts)
    merged_key = (floor, tuple(wheres))
    merged = cache.get(revision, merged_key)
    if merged is None:  # one index over the scopes in order, first copy of a memory kept
        merged = LexicalIndex(r for part in parts for r in part.records.values())
        cache.put(revision, merged_key, merged)
    return merged
