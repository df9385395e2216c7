"""BM25 written plainly, a memory at a time: what every index of the reader must equal."""

from __future__ import annotations

import math
from collections import Counter

from executive.memory.read.lexical import LexicalIndex
from executive.memory.read.scope_index import ScopedIndex
from executive.memory.read.words import terms
from executive.memory.store.base import MemoryRecord


def plain_bm25(
    records: list[MemoryRecord],
    query: list[str],
    top_k: int,
    weights: dict[str, float] | None = None,
) -> list[str]:
    """The ids of ``records`` BM25 ranks first (k1 1.2, b 0.75), ties to the older memory,
    then the lower id (the listing's order)."""
    counts = {r.id: Counter(terms(r.text)) for r in records}
    n = len(counts)
    average = sum(c.total() for c in counts.values()) / n if n else 1.0
    scores: dict[str, float] = {}
    for term in dict.fromkeys(query):
        df = sum(1 for c in counts.values() if c[term])
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5)) * (weights or {}).get(term, 1.0)
        for memory_id, held in counts.items():
            if held[term]:
                norm = 1.2 * ((1 - 0.75) + 0.75 * held.total() / average)
                share = idf * held[term] * (1.2 + 1) / (held[term] + norm)
                scores[memory_id] = scores.get(memory_id, 0.0) + share
    key = {r.id: (r.created_at or "", r.id) for r in records}
    return sorted(scores, key=lambda m: (-scores[m], key[m]))[:top_k]


def single(records: list[MemoryRecord]) -> ScopedIndex:
    """One index over ``records`` (the first copy of a memory counts), as a request sees it."""
    return ScopedIndex([(LexicalIndex(records), None)])
