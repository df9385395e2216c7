"""Words and a BM25 index over one scope's memories: the reader's lexical pass.

MiniLM blurs exact names, identifiers and rare words; BM25 over the scope catches them, and
its document frequencies say which words are everywhere (a project's slug, the agent's name)
and so discriminate nothing. English-only heuristics: a small stop list and a small suffix
stripper; identifiers with ``-``, ``_`` or ``.`` stay whole.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from executive.memory.store.base import MemoryRecord

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "cannot",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "kind",
        "kinds",
        "type",
        "types",
        "thing",
        "things",
        "much",
        "many",
        "likely",
        "also",
        "ever",
        "get",
        "got",
        "i'm",
        "i've",
        "it's",
        "let's",
        "that's",
        "there's",
        "they're",
        "we're",
        "what's",
        "who's",
        "you're",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "wasn't",
        "can't",
        "won't",
        "hey",
        "hi",
        "hello",
        "yeah",
        "yes",
        "yep",
        "wow",
        "oh",
        "ok",
        "okay",
        "thanks",
        "thank",
        "cool",
        "awesome",
        "great",
        "nice",
        "really",
        "pretty",
        "sure",
        "gonna",
        "wanna",
        "totally",
        "definitely",
        "absolutely",
        "amazing",
        "glad",
        "sounds",
        "sound",
        "like",
        "lot",
        "lots",
        "stuff",
        "always",
    ]
)

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'\-.]*[A-Za-z0-9]|[A-Za-z0-9]")
_SUFFIXES = (
    ("ational", 5),
    ("ization", 5),
    ("ingly", 4),
    ("edly", 4),
    ("ings", 4),
    ("ing", 4),
    ("ies", 3),
    ("ied", 3),
    ("ers", 4),
    ("er", 4),
    ("ed", 4),
    ("es", 4),
    ("ly", 4),
    ("s", 3),
)


# A pure function of the word, called for every word of every text a scope indexes; the
# vocabulary is small beside the word count, so a first index build is mostly cache hits.
@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """researching → research, paintings → paint, running → run; identifiers mostly intact."""
    for suffix, minimum in _SUFFIXES:
        if (
            word.endswith(suffix)
            and len(word) - len(suffix) >= minimum - 1
            and len(word) > len(suffix) + 2
        ):
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                base += "y"
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]
            return base
    return word


@functools.lru_cache(maxsize=65_536)
def normal(surface: str) -> str:
    lowered = surface.lower().strip("'")
    return lowered[:-2] if lowered.endswith("'s") else lowered


def tokens(text: str) -> list[tuple[str, str]]:
    """(surface, normal form) for every word: the one tokenizer, for the index's terms and the
    harvester's near-duplicate check alike."""
    return [(surface, normal(surface)) for surface in WORD.findall(text)]


# What a surface form indexes as (None: a stop word or a single letter). The same few
# thousand surface forms recur in every text, so a first index build of a scope is mostly one
# cache lookup per word.
@functools.lru_cache(maxsize=65_536)
def _term(surface: str) -> str | None:
    lowered = normal(surface)
    return stem(lowered) if len(lowered) >= 2 and lowered not in STOP_WORDS else None


def words(text: str) -> list[tuple[str, str]]:
    """(surface, term) for each content word; the term is lower case and stemmed."""
    found = [(surface, _term(surface)) for surface in WORD.findall(text)]
    return [(surface, term) for surface, term in found if term is not None]


K = TypeVar("K", str, int)


def best_first(scores: Mapping[K, float]) -> list[K]:
    """Keys by score, highest first, ties by key: the keys sorted, then a stable sort on the
    score (no key tuple per item: this runs on every search)."""
    ranking = sorted(scores)
    ranking.sort(key=scores.__getitem__, reverse=True)
    return ranking


def terms(text: str) -> list[str]:
    found = map(_term, WORD.findall(text))
    return [term for term in found if term is not None]


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

    def search(
        self, query_terms: Sequence[str], top_k: int, weights: dict[str, float] | None = None
    ) -> list[str]:
        scores: defaultdict[int, float] = defaultdict(float)
        for term in dict.fromkeys(query_terms):  # ordered: results never depend on hashing
            if term in self._postings:
                idf = self.idf(term) * (weights.get(term, 1.0) if weights else 1.0)
                self.add_scores(scores, term, idf, self._average)
        return [self.ids[position] for position in best_first(scores)[:top_k]]

    def add_scores(
        self,
        scores: defaultdict[int, float],
        term: str,
        idf: float,
        average: float,
        offset: int = 0,
    ) -> None:
        """One term's BM25 share for each memory holding it, at ``offset + position``.

        ``idf`` and ``average`` may be those of a union of indexes (:mod:`scope_index`): the
        arithmetic is the same, so the same scores come out to the last bit.
        """
        k1, b = self.k1, self.b
        lengths = self._lengths
        for position, count in self._postings.get(term, ()):
            norm = k1 * (1 - b + b * lengths[position] / average)
            scores[offset + position] += idf * count * (k1 + 1) / (count + norm)


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
