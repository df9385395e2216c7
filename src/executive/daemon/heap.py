"""The daemon's heap once it is ready: what start-up built lives as long as the process.

Python's cyclic collector scans every tracked object in a full collection, and it runs one
whenever the objects that outlived the younger collections grew by a quarter since the last.
A daemon's reads fill caches (a scope's records and word index, tens of thousands of objects
again after every write), so full collections recur, and each scanned the modules, classes
and schemas start-up built as well: 115-170 ms apiece at 100,000 memories on Postgres, five
in 200 packs, each inside a pack (``bench/postgres_scale.py``, its ``max``).

So once the daemon is ready, start-up's objects are frozen (``gc.freeze``: never scanned,
never freed, as they never would have been), and the youngest generation is collected every
10,000 allocations instead of 700: a pack's temporary objects mostly die by reference count
before a collection sees them. Full collections fell to two, of 50-80 ms. Cycles are still
collected. Nothing the daemon decides depends on when the collector runs.
"""

from __future__ import annotations

import gc

YOUNG = 10_000  # allocations between two collections of the youngest generation


def settle() -> int:
    """Freeze what exists now and space the young collections out; the objects frozen."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
    return gc.get_freeze_count()
