"""How the reader sharpens its questions from what came back.

* The focus sentence: the question without its *ubiquitous* words, those found in a large
  share of the scope's memories. A project slug or a person's name that is everywhere pulls
  a similarity search toward every short memory that mentions it; without it the search
  finds the memories about the topic (classic IDF reasoning).
* A refinement: the best-ranked memory not yet used as a seed lends its most specific new
  words (highest IDF: names, identifiers, error codes) to the next question. A memory about
  code lends what it is about instead (its files, the functions and classes it changed),
  since those are what a related change meets again. Never a label: a number, a date or an
  id (a run's, a contract's) only finds the memory it came from again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from executive.memory.read.words import WORD, normal, stem, words
from executive.memory.store.base import MemoryRecord

FROM_TOP = 10
# A number, a date, a version, a hex id, or a word that carries a long run of digits.
_LABEL = re.compile(r"[\d\W_]+|.*\d{3,}.*|(?=.*\d)[0-9a-f]{6,}", re.IGNORECASE)


class WordStats(Protocol):
    df: object

    def share(self, term: str) -> float: ...

    def idf(self, term: str) -> float: ...


class _Config(Protocol):
    ubiquitous_share: float
    ubiquitous_min: int
    seed_terms: int


def ubiquitous(stats: WordStats, term: str, share: float, minimum: int) -> bool:
    return stats.share(term) > share and stats.df.get(term, 0) >= minimum  # type: ignore[attr-defined]


def focus_sentence(question: str, stats: WordStats, share: float, minimum: int) -> str:
    kept = [
        w for w in WORD.findall(question) if not ubiquitous(stats, stem(normal(w)), share, minimum)
    ]
    sentence = " ".join(kept)
    return sentence + ("?" if question.rstrip().endswith("?") and sentence else "")


def refinement(
    ranking: Sequence[str],
    seen: Mapping[str, MemoryRecord],
    stats: WordStats,
    used_seeds: set[str],
    used_terms: set[str],
    cfg: _Config,
) -> tuple[str | None, list[tuple[str, str]]]:
    """The next seed memory and the words it lends, or (None, []) when none has any."""
    for memory_id in ranking[:FROM_TOP]:
        if memory_id in used_seeds or memory_id not in seen:
            continue
        used_seeds.add(memory_id)
        picked: list[tuple[str, str]] = []
        for surface, term in lendable(seen[memory_id]):
            if term in used_terms or any(term == p[1] for p in picked):
                continue
            if ubiquitous(stats, term, cfg.ubiquitous_share, cfg.ubiquitous_min):
                continue
            picked.append((surface, term))
        picked.sort(key=lambda p: -stats.idf(p[1]))  # most specific first
        if picked:
            return memory_id, picked[: cfg.seed_terms]
    return None, []


def lendable(memory: MemoryRecord) -> list[tuple[str, str]]:
    """(surface, term) a memory may lend: what it is about when it names code (each file by
    its own name, each function or class), else its words; never a label."""
    about = [
        (value, _last_term(value))
        for key in ("symbols", "files")
        for value in _strings(memory.metadata.get(key))
    ]
    found = [(s, t) for s, t in about if t] or words(memory.text)
    return [(s, t) for s, t in found if not _LABEL.fullmatch(s)]


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _last_term(value: str) -> str:
    """The most specific word of a path or a dotted name: its last (``handlers.py``)."""
    found = words(value.rsplit("/", 1)[-1])
    return found[-1][1] if found else ""
