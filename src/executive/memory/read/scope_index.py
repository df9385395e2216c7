"""The reader's BM25 over the scopes it searches: the store's word index, seen through them.

A store keeps its memories' words in parts (:mod:`executive.memory.store.wordindex`: a
project's, the global scope's, ...), kept as memories are added, updated and deleted. A
request's index is those parts with a mask each (the memories its filters select, above the
confidence floor, unexpired), searched as one index: scored with the statistics of the
memories the masks keep (document frequencies, count, mean length), so it returns what one
index built over those memories alone returns: the same memories in the same order, the same
floats. A part's mask is fixed when the request's index is made, so a write while a pack is
being read changes nothing that pack sees.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING

from executive.memory.read.lexical import LexicalIndex, Scores, WordStatistics, listing_order
from executive.memory.store.base import MemoryRecord

if TYPE_CHECKING:
    import numpy as np

# A part, and which of its memories the request sees (None: every one).
Part = tuple[LexicalIndex, "np.ndarray | None"]


class _Frequencies:
    """The union's document frequencies, counted on demand (the reader reads a few words')
    and kept for the request."""

    def __init__(self, parts: Sequence[Part]) -> None:
        self._parts = parts
        self._known: dict[str, int] = {}

    def get(self, term: str, default: int = 0) -> int:
        found = self._known.get(term)
        if found is None:
            found = self._known[term] = sum(_df(part, live, term) for part, live in self._parts)
        return found if found else default


def _df(part: LexicalIndex, live: np.ndarray | None, term: str) -> int:
    if live is None:
        return part.df.get(term, 0)
    postings = part.postings(term)
    return 0 if postings is None else int(live[postings[0]].sum())


class ScopedIndex(WordStatistics):
    """Disjoint masked parts searched as one index over the memories they keep."""

    def __init__(self, parts: Sequence[Part]) -> None:
        self.parts = tuple(parts)
        self.df = _Frequencies(self.parts)
        self.n = sum(part.n if live is None else int(live.sum()) for part, live in self.parts)
        # Integer sums, so the mean is the very float one index over everything computes.
        total = sum(
            part.total_length if live is None else int(part.lengths[live].sum())
            for part, live in self.parts
        )
        self._average = total / self.n if self.n else 1.0
        self._offsets = [0, *accumulate(part.n for part, _ in self.parts)][:-1]

    def search(
        self, query_terms: Sequence[str], top_k: int, weights: dict[str, float] | None = None
    ) -> list[str]:
        # BM25 over the union: positions run on from one part to the next, as
        # one index's would; each memory adds its terms in query order.
        scores = Scores(sum(part.n for part, _ in self.parts))
        for term in dict.fromkeys(query_terms):
            if self.df.get(term, 0):
                idf = self.idf(term) * (weights.get(term, 1.0) if weights else 1.0)
                for (part, live), offset in zip(self.parts, self._offsets, strict=True):
                    part.add_scores(scores, term, idf, self._average, offset, live)
        return [self._id(position) for position in scores.best(top_k, self._order)]

    @functools.cached_property
    def _order(self) -> np.ndarray:
        """Ranks in the listing order across the parts (ties go to the older memory)."""
        parts = [part for part, _ in self.parts]
        return parts[0].order if len(parts) == 1 else listing_order([part.keys for part in parts])

    def _id(self, position: int) -> str:
        which = bisect.bisect_right(self._offsets, position) - 1
        return self.parts[which][0].ids[position - self._offsets[which]]

    def get(self, memory_id: str) -> MemoryRecord | None:
        """A memory this index keeps (a lexical hit's record)."""
        for part, live in self.parts:
            record = part.records.get(memory_id)
            if record is not None and (live is None or live[part.position(memory_id)]):
                return record
        return None

    def records(self) -> Iterator[MemoryRecord]:
        for part, live in self.parts:
            if live is None:
                yield from part.records.values()
            else:
                yield from (part.records[part.ids[i]] for i in live.nonzero()[0].tolist())
