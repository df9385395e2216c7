"""The store's word index: every memory's words, kept as memories are added, updated, deleted.

The reader's BM25 pass needs the words of the memories in the scopes it searches. Listing a
scope and indexing it on a pack's way cost a bundle's first pack (and every pack after a
write) most of its time, so the store keeps the index itself: built once from every memory
when first asked for, then told of each write.

It is kept in parts, one per ``app_id`` (a project, the global scope, ...), each an immutable
:class:`~executive.memory.read.lexical.LexicalIndex` of its memories plus a small one of those
added since, with what a reader's filter asks of every memory (user, agent, env, type,
stored confidence, expiry) and which memories are live. A write tokenises only the memory it
wrote: it is added to the small part, or marked dead where it was (an update does both); when
the small part or the dead grow past a share of the part, the part is laid out again from
the words already counted (:func:`~executive.memory.read.lexical.term_counts`).

:meth:`WordIndex.view` gives a request its index: the parts its filters name, each with a
mask of the memories the filter, the confidence floor and the reader's clock admit
(:class:`~executive.memory.read.scope_index.ScopedIndex`). Parts are never changed in place (a
write makes new ones), so a request's index is a snapshot: a write during a pack changes
nothing that pack reads. A filter naming anything else (a run, a cohort, a key, metadata)
gets no index (None): the reader then estimates word statistics from its hits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import numpy as np

from executive.dates import parse_instant
from executive.memory.read.lexical import LexicalIndex
from executive.memory.read.scope_index import ScopedIndex
from executive.memory.store.base import Filter, MemoryRecord

FRESH_MIN = 32  # memories the small block may hold before all are laid out (at the least)
DEAD_SHARE = 4  # dead memories kept in a part before it is laid out again: 1/4
_NONE, _OTHER, _UNKNOWN = -1, -2, -3  # a missing value; not a string; a filter's unseen value
_NEVER = np.iinfo(np.int64).max
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _micros(when: datetime) -> int:
    """An instant as whole microseconds since 1970: exact, as datetimes compare."""
    return (when - _EPOCH) // _MICROSECOND


class _Codes:
    """Small integers for the strings filters compare (user, agent, env, type)."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}

    def of(self, value: object) -> int:
        if value is None:
            return _NONE
        if not isinstance(value, str):
            return _OTHER  # equal to no filter's value, as in Filter.matches
        return self._codes.setdefault(value, len(self._codes))

    def find(self, value: str) -> int:
        return self._codes.get(value, _UNKNOWN)


@dataclass(frozen=True)
class _Block:
    """A :class:`LexicalIndex` with each memory's filter fields and whether it is live."""

    words: LexicalIndex
    user: np.ndarray
    agent: np.ndarray
    env: np.ndarray
    type: np.ndarray
    confidence: np.ndarray  # NaN where the stored confidence is not a number
    expires: np.ndarray  # microseconds; _NEVER where none
    live: np.ndarray

    @classmethod
    def of(cls, records: Sequence[MemoryRecord], codes: _Codes) -> _Block:
        words = LexicalIndex(records)
        kept = [words.records[i] for i in words.ids]

        def coded(values: Iterable[object]) -> np.ndarray:
            return np.fromiter(map(codes.of, values), np.int64, len(kept))

        def expiry(record: MemoryRecord) -> int:
            when = parse_instant(record.metadata.get("expires_at"))
            return _NEVER if when is None else _micros(when)

        confidences = (np.nan if r.confidence is None else r.confidence for r in kept)
        return cls(
            words,
            coded(r.user_id for r in kept),
            coded(r.agent_id for r in kept),
            coded(r.metadata.get("env") for r in kept),
            coded(r.metadata.get("type") for r in kept),
            np.fromiter(confidences, np.float64, len(kept)),
            np.fromiter(map(expiry, kept), np.int64, len(kept)),
            np.ones(len(kept), np.bool_),
        )

    def live_records(self) -> list[MemoryRecord]:
        return [self.words.records[self.words.ids[i]] for i in self.live.nonzero()[0].tolist()]

    def dead(self) -> int:
        return len(self.live) - int(self.live.sum())

    def without(self, memory_id: str) -> _Block:
        live = self.live.copy()  # a new block: a request's snapshot keeps the old one
        live[self.words.position(memory_id)] = False
        return replace(self, live=live)

    def admits(self, where: Filter, floor: float, now: int, codes: _Codes) -> np.ndarray:
        """Which live memories ``where`` matches at ``floor``, unexpired at ``now``: what
        ``Filter.matches`` and ``ranking.admissible`` say of each, at once."""
        mask = self.live & (self.expires > now)
        threshold = floor if where.min_confidence is None else max(floor, where.min_confidence)
        mask &= self.confidence >= threshold  # NaN (no confidence) is never admitted
        for value, column in (
            (where.user_id, self.user),
            (where.agent_id, self.agent),
            (where.env, self.env),
        ):
            if value is not None:
                mask &= column == codes.find(value)
        if where.types:
            mask &= np.isin(self.type, [codes.find(t) for t in where.types])
        return mask


class _Part:
    """One app's memories: a laid-out block, a small block of those written since, and where
    each memory is (0: the laid-out block, 1: the small one)."""

    def __init__(self, codes: _Codes) -> None:
        self._codes = codes
        self.blocks: tuple[_Block, ...] = ()
        self._at: dict[str, int] = {}

    def remove(self, memory_id: str) -> None:
        which = self._at.pop(memory_id, None)
        if which is None:
            return
        blocks = list(self.blocks)
        blocks[which] = blocks[which].without(memory_id)
        self.blocks = tuple(blocks)
        if blocks[0].dead() > max(FRESH_MIN, len(blocks[0].live) // DEAD_SHARE):
            self._lay_out()

    def put(self, records: Sequence[MemoryRecord]) -> None:
        """Memories added or updated: each one's words counted once, where it is now."""
        latest = list({r.id: r for r in records}.values())  # a memory written twice: its last
        for record in latest:
            self.remove(record.id)
        fresh = [*(self.blocks[1].live_records() if len(self.blocks) > 1 else ()), *latest]
        laid = int(self.blocks[0].live.sum()) if self.blocks else 0
        # Each write lays out the small block again, and every so often everything: about
        # the square root of the part between the two keeps their sum smallest.
        if not self.blocks or len(fresh) > max(FRESH_MIN, math.isqrt(laid)):
            self._lay_out(latest)
            return
        self.blocks = (self.blocks[0], _Block.of(fresh, self._codes))
        self._at.update(dict.fromkeys((r.id for r in fresh), 1))

    def _lay_out(self, more: Sequence[MemoryRecord] = ()) -> None:
        records = [r for block in self.blocks for r in block.live_records()] + list(more)
        self.blocks = (_Block.of(records, self._codes),) if records else ()
        self._at = dict.fromkeys((r.id for r in records), 0)

    def __len__(self) -> int:
        return len(self._at)


def _indexable(where: Filter) -> bool:
    return (
        where.run_id is None and where.cohort is None and where.key is None and not where.metadata
    )


class WordIndex:
    def __init__(self, records: Iterable[MemoryRecord] = ()) -> None:
        self._codes = _Codes()
        self._parts: dict[str | None, _Part] = {}
        self._app_of: dict[str, str | None] = {}
        self.put(list(records))

    def __len__(self) -> int:
        return len(self._app_of)

    def app_of(self, memory_id: str) -> str | None:
        return self._app_of.get(memory_id)

    def put(self, records: Sequence[MemoryRecord]) -> None:
        """Memories added or updated (their words, text and fields as stored now)."""
        by_app: dict[str | None, list[MemoryRecord]] = {}
        for record in records:
            if self._app_of.get(record.id, record.app_id) != record.app_id:
                self.remove(record.id)  # moved to another app: it leaves the old part
            by_app.setdefault(record.app_id, []).append(record)
            self._app_of[record.id] = record.app_id
        for app, found in by_app.items():
            part = self._parts.get(app)
            if part is None:
                part = self._parts[app] = _Part(self._codes)
            part.put(found)

    def remove(self, memory_id: str) -> None:
        if memory_id not in self._app_of:
            return
        app = self._app_of.pop(memory_id)
        part = self._parts[app]
        part.remove(memory_id)
        if not len(part):
            del self._parts[app]

    def view(self, wheres: Sequence[Filter], floor: float, now: datetime) -> ScopedIndex | None:
        """The index of a request that searches ``wheres`` (each a scope), or None when a
        filter names what this index does not keep."""
        if not all(_indexable(where) for where in wheres):
            return None
        instant = _micros(now)
        masks: dict[int, tuple[_Block, np.ndarray]] = {}
        for where in wheres:
            apps = where.app_ids or tuple(sorted(self._parts, key=lambda a: (a is None, a or "")))
            for app in apps:
                part = self._parts.get(app)
                for block in part.blocks if part is not None else ():
                    mask = block.admits(where, floor, instant, self._codes)
                    if id(block) in masks:  # scopes that share memories: each counts once
                        mask = mask | masks[id(block)][1]
                    masks[id(block)] = (block, mask)
        return ScopedIndex(
            [
                (block.words, None if mask.all() else mask)
                for block, mask in masks.values()
                if mask.any()
            ]
        )
