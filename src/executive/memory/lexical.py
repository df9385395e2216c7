"""A BM25 index over one scope's memories: the reader's lexical pass.

MiniLM blurs exact names, identifiers and rare words; BM25 over the scope catches them, and
its document frequencies say which words are everywhere (a project's slug, the agent's name)
and so discriminate nothing. A memory's words are :mod:`executive.memory.words`'.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

import numpy as np

from executive.memory.store.base import MemoryRecord
from executive.memory.words import terms

K = TypeVar("K", str, int)


def best_first(scores: Mapping[K, float]) -> list[K]:
    """Keys by score, highest first, ties by key: the keys sorted, then a stable sort on the
    score (no key tuple per item: this runs on every search)."""
    ranking = sorted(scores)
    ranking.sort(key=scores.__getitem__, reverse=True)
    return ranking


# Term counts by memory text. A write moves the store's revision and so rebuilds an index,
# but only the new texts need tokenising: the rest come from here (bounded, oldest out).
_COUNTS: OrderedDict[str, Counter[str]] = OrderedDict()
_COUNTS_SIZE = 50_000


def term_counts(text: str) -> Counter[str]:
    found = _COUNTS.get(text)
    if found is None:
        found = _COUNTS[text] = Counter(terms(text))
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
        """The share of memories that contain ``term``."""
        return self.df.get(term, 0) / self.n if self.n else 0.0

    def idf(self, term: str) -> float:
        n = self.df.get(term, 0)
        return math.log(1 + (self.n - n + 0.5) / (n + 0.5))


class LexicalIndex(WordStatistics):
    """BM25 (k1 1.2, b 0.75) over a scope's memories, with document frequencies."""

    def __init__(self, records: Iterable[MemoryRecord], k1: float = 1.2, b: float = 0.75) -> None:
        self.records: dict[str, MemoryRecord] = {}
        self.df: Counter[str] = Counter()
        self.ids: list[str] = []
        self._postings: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
        self._lengths: list[int] = []
        # Locals: this loop runs once per word of every memory of a scope's first read.
        held, ids, lengths, df, postings = (
            self.records,
            self.ids,
            self._lengths,
            self.df,
            self._postings,
        )
        for record in records:
            if record.id in held:
                continue
            position = len(ids)
            ids.append(record.id)
            held[record.id] = record
            counts = term_counts(record.text)
            lengths.append(counts.total())
            for term, count in counts.items():
                df[term] += 1
                postings[term].append((position, count))
        self.n = len(self.ids)
        self.total_length = sum(self._lengths)
        self._average = self.total_length / self.n if self.n else 1.0
        self.k1, self.b = k1, b
        # A searched term's postings as arrays, made on its first search: a pack searches a
        # few dozen of a scope's thousands of terms.
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._length_array: np.ndarray | None = None

    def search(
        self, query_terms: Sequence[str], top_k: int, weights: dict[str, float] | None = None
    ) -> list[str]:
        scores = Scores(self.n)
        for term in dict.fromkeys(query_terms):  # ordered: results never depend on hashing
            if term in self._postings:
                idf = self.idf(term) * (weights.get(term, 1.0) if weights else 1.0)
                self.add_scores(scores, term, idf, self._average)
        return [self.ids[position] for position in scores.best(top_k)]

    def add_scores(
        self, scores: Scores, term: str, idf: float, average: float, offset: int = 0
    ) -> None:
        """One term's BM25 share for each memory holding it, at ``offset + position``.

        ``idf`` and ``average`` may be those of a union of indexes (:mod:`scope_index`): the
        arithmetic is the same, so the same scores come out to the last bit. In numpy, one
        term's memories at once: the same double operations in the same order as the loop
        over them they replace (``(1 - b) + b * length / average``, then ``idf * count *
        (k1 + 1) / (count + norm)``), so the same bits, ten times faster.
        """
        if term not in self._postings:  # a union's other scopes hold it, not this one
            return
        found = self._arrays.get(term)
        if found is None:
            postings = self._postings[term]
            positions = np.fromiter((p for p, _ in postings), np.int64, len(postings))
            counts = np.fromiter((c for _, c in postings), np.float64, len(postings))
            if self._length_array is None:
                self._length_array = np.asarray(self._lengths, np.float64)
            found = self._arrays[term] = (positions, counts, self._length_array[positions])
        positions, counts, lengths = found
        k1, b = self.k1, self.b
        norm = k1 * ((1 - b) + b * lengths / average)
        scores.add(offset + positions, idf * counts * (k1 + 1) / (counts + norm))


class Scores:
    """BM25 sums by position over ``n`` memories, and which positions any term reached."""

    def __init__(self, n: int) -> None:
        self._sums = np.zeros(n, np.float64)
        self._reached = np.zeros(n, np.bool_)

    def add(self, positions: np.ndarray, shares: np.ndarray) -> None:
        self._sums[positions] += shares  # a term's positions are distinct
        self._reached[positions] = True

    def best(self, top_k: int) -> list[int]:
        """The reached positions by score, highest first, ties by position (best_first)."""
        positions = np.flatnonzero(self._reached)
        order = np.lexsort((positions, -self._sums[positions]))
        return [int(p) for p in positions[order[:top_k]]]


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
