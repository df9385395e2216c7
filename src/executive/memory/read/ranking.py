"""Ranking the memories a reader found: search score first, then type priority, then recency.

The confidence floor is a filter on each memory's *stored* confidence, applied before
ranking; the search score only orders. (A 0.7 floor on cosine scores would empty every pack:
relevant MiniLM scores sit around 0.3-0.6.)
"""

from __future__ import annotations

import functools
import math
from datetime import datetime

from executive.dates import parse_instant
from executive.memory.store.base import MemoryRecord
from executive.memory.taxonomy import TYPE_RULES

# Small nudges on a cosine score: enough to order near-ties, never to beat a clearly
# better match. A principle edges out an equally similar episode.
_TYPE_BONUS = {kind: 0.05 - 0.0125 * rule.priority for kind, rule in TYPE_RULES.items()}
_RECENCY_BONUS = 0.02
_RECENCY_DAYS = 30.0


def admissible(record: MemoryRecord, floor: float, now: datetime | None = None) -> bool:
    """Above the confidence floor (on stored confidence) and not expired."""
    meta = record.metadata  # read directly: a pack checks a thousand search hits
    confidence = meta.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return False
    return confidence >= floor and ("expires_at" not in meta or not record.expired(now))


@functools.lru_cache(maxsize=65_536)
def _created(value: str | None) -> datetime | None:
    # Every pack ranks a few hundred memories, mostly the same ones: parsed once each.
    return parse_instant(value)


def age_days(record: MemoryRecord, now: datetime) -> float | None:
    created = _created(record.created_at) if isinstance(record.created_at, str) else None
    if created is None:
        return None
    return max((now - created).total_seconds() / 86400, 0.0)


def rank_bonus(record: MemoryRecord, now: datetime) -> float:
    """What type priority and recency add to a memory's (normalised) search score."""
    bonus = _TYPE_BONUS.get(record.type, 0.0)  # a StrEnum key is found by its string
    age = age_days(record, now)
    recency = _RECENCY_BONUS * math.exp(-age / _RECENCY_DAYS) if age is not None else 0.0
    return bonus + recency
