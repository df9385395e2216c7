"""A BM25 index over one scope's memories: the reader's lexical pass.

MiniLM blurs exact names, identifiers and rare words; BM25 over the scope catches them, and
its document frequencies say which words are everywhere (a project's slug, the agent's name)
and so discriminate nothing. A memory's words are :mod:`executive.memory.read.words`'.
"""

from __future__ import annotations

import functools
import math
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from sys import intern
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeVar

from executive.memory.read.words import terms
from executive.memory.store.base import MemoryRecord

# numpy is imported where an index is built or searched, not here: every daemon imports
# this module (the hooks and the loop name the reader), and one with memory off never
# indexes anything; numpy was ~130 ms of its start.
if TYPE_CHECKING:
    import numpy as np

K = TypeVar("K", str, int)


def best_first(scores: Mapping[K, float]) -> list[K]:
    """Keys by score, highest first, ties by key: the keys sorted, then a stable sort on the
    score (no key tuple per item: this runs on every search)."""
    ranking = sorted(scores)
    ranking.sort(key=scores.__getitem__, reverse=True)
    return ranking


class TermCounts(NamedTuple):
    """A text's distinct words, in the order they first occur, and how often each does."""

    terms: tuple[str, ...]
    counts: tuple[int, ...]


# Term counts by memory text. A write moves the store's revision and so rebuilds an index,
# but only the new texts need tokenising: the rest come from here (bounded, oldest out).
# Two tuples, not a Counter: this holds every memory's words (~3 MB less at 10,000).
_COUNTS: OrderedDict[str, TermCounts] = OrderedDict()
_COUNTS_SIZE = 50_000


def term_counts(text: str) -> TermCounts:
    found = _COUNTS.get(text)
    if found is None:
        # One copy of each word for all the texts kept here (~3 MB at 10,000 memories).
        counted = Counter(map(intern, terms(text)))
        found = _COUNTS[text] = TermCounts(tuple(counted), tuple(counted.values()))
        if len(_COUNTS) > _COUNTS_SIZE:
            _COUNTS.popitem(last=False)
    return found


class Counts(Protocol):
    def get(self, term: str, default: int = 0, /) -> int: ...


class WordStatistics:
    """What the reader asks of any word statistics: ``df`` (memories holding a term) of
    ``n`` memories. An index, a union of indexes, or a sample of search hits."""

    df: Counts
    n: int

    def share(self, term: str) -> float:
        return self.df.get(term, 0) / self.n if self.n else 0.0

    def idf(self, term: str) -> float:
        n = self.df.get(term, 0)
        return math.log(1 + (self.n - n + 0.5) / (n + 0.5))


class LexicalIndex(WordStatistics):
    """BM25 (k1 1.2, b 0.75) over a list of memories, with document frequencies. Immutable:
    the store's word index (:mod:`executive.memory.store.wordindex`) is made of these, and a
    request searches some of their memories through a mask (:mod:`scope_index`)."""

    def __init__(self, records: Iterable[MemoryRecord], k1: float = 1.2, b: float = 0.75) -> None:
        import numpy as np

        self.records: dict[str, MemoryRecord] = {}
        for record in records:
            self.records.setdefault(record.id, record)  # the first copy of a memory counts
        self.ids: list[str] = list(self.records)
        self._at = dict(zip(self.ids, range(len(self.ids)), strict=True))
        every = [term_counts(r.text) for r in self.records.values()]
        # The postings of every term as three flat arrays (position, count, and where each
        # term's run starts), grouped by a stable sort of term ids, so a term's postings come
        # in position order. Built by numpy and C-level iteration: this runs on a scope's
        # first read, and a per-word Python loop was most of its cost.
        terms_flat = list(chain.from_iterable(c.terms for c in every))  # each one's distinct
        self.df: Counter[str] = Counter(terms_flat)
        self._term_ids: dict[str, int] = dict(zip(self.df, range(len(self.df)), strict=True))
        term_of = np.fromiter(
            map(self._term_ids.__getitem__, terms_flat), np.int64, len(terms_flat)
        )
        order = np.argsort(term_of, kind="stable")
        sizes = np.fromiter((len(c.terms) for c in every), np.int64, len(every))
        self._positions = np.repeat(np.arange(len(every), dtype=np.int64), sizes)[order]
        tf = chain.from_iterable(c.counts for c in every)
        self._tf = np.fromiter(tf, np.float64, len(terms_flat))[order]
        self._starts = np.zeros(len(self.df) + 1, np.int64)
        np.cumsum(np.bincount(term_of, minlength=len(self.df)), out=self._starts[1:])
        self.lengths = np.fromiter((sum(c.counts) for c in every), np.int64, len(every))
        self._lengths = self.lengths.astype(np.float64)
        self.n = len(self.ids)
        self.total_length = int(self.lengths.sum())  # integers: the mean is exact in any order
        self.k1, self.b = k1, b
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    @functools.cached_property
    def order(self) -> np.ndarray:
        """Each position's rank in the listing order (creation time, then id)."""
        return listing_order([self.keys])

    @functools.cached_property
    def keys(self) -> tuple[np.ndarray, np.ndarray]:
        """Each memory's creation time and id, as arrays (what the listing orders by)."""
        import numpy as np

        records = [self.records[i] for i in self.ids]
        return (
            np.array([r.created_at or "" for r in records], np.str_),
            np.array(self.ids, np.str_),
        )

    def position(self, memory_id: str) -> int:
        return self._at[memory_id]

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The memories holding ``term``: (positions, counts, lengths), or None."""
        found = self._arrays.get(term)
        if found is None:
            which = self._term_ids.get(term)
            if which is None:
                return None
            run = slice(self._starts[which], self._starts[which + 1])
            positions = self._positions[run]
            # Kept: a common word of a large scope is searched by many packs.
            found = self._arrays[term] = (positions, self._tf[run], self._lengths[positions])
        return found

    def add_scores(
        self,
        scores: Scores,
        term: str,
        idf: float,
        average: float,
        offset: int = 0,
        live: np.ndarray | None = None,
    ) -> None:
        """One term's BM25 share for each memory holding it, at ``offset + position``; with
        ``live``, for the memories it marks only.

        ``idf`` and ``average`` may be those of a union of indexes (:mod:`scope_index`): the
        arithmetic is the same, so the same scores come out to the last bit. In numpy, one
        term's memories at once: the same double operations in the same order as the loop
        over them they replace (``(1 - b) + b * length / average``, then ``idf * count *
        (k1 + 1) / (count + norm)``), so the same bits, ten times faster.
        """
        found = self.postings(term)
        if found is None:  # a union's other parts hold it, not this one
            return
        positions, counts, lengths = found
        if live is not None:
            keep = live[positions]
            positions, counts, lengths = positions[keep], counts[keep], lengths[keep]
        k1, b = self.k1, self.b
        norm = k1 * ((1 - b) + b * lengths / average)
        scores.add(offset + positions, idf * counts * (k1 + 1) / (counts + norm))


def listing_order(keys: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Ranks, by creation time then id, of the memories of several parts laid end to end."""
    import numpy as np

    created = np.concatenate([c for c, _ in keys]) if keys else np.zeros(0, np.str_)
    ids = np.concatenate([i for _, i in keys]) if keys else np.zeros(0, np.str_)
    ranks = np.empty(len(ids), np.int64)
    ranks[np.lexsort((ids, created))] = np.arange(len(ids))
    return ranks


class Scores:
    """BM25 sums by position over ``n`` memories, and which positions any term reached."""

    def __init__(self, n: int) -> None:
        import numpy as np

        self._sums = np.zeros(n, np.float64)
        self._reached = np.zeros(n, np.bool_)

    def add(self, positions: np.ndarray, shares: np.ndarray) -> None:
        self._sums[positions] += shares  # a term's positions are distinct
        self._reached[positions] = True

    def best(self, top_k: int, order: np.ndarray) -> list[int]:
        """The reached positions by score, highest first, ties by ``order`` (each position's
        rank in the listing order: creation time, then id). So what comes back depends on the
        memories and their words, never on where each one sits: the store's word index holds
        them in the order they were written."""
        import numpy as np

        positions = np.flatnonzero(self._reached)
        best = np.lexsort((order[positions], -self._sums[positions]))[:top_k]
        return [int(p) for p in positions[best]]


class SampleStats(WordStatistics):
    """Word statistics estimated from what the searches returned, when no index exists.

    A biased sample, but enough to spot the words that are everywhere.
    """

    def __init__(self) -> None:
        self.df: Counter[str] = Counter()
        self.n = 0
        self._seen: set[str] = set()

    def add(self, records: Iterable[MemoryRecord]) -> None:
        for record in records:
            if record.id not in self._seen:
                self._seen.add(record.id)
                self.n += 1
                self.df.update(set(terms(record.text)))
