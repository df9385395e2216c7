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

Start-up also leaves freed memory behind: building the word index of 10,000 memories makes
and drops ~40 MB of temporaries, which glibc keeps in its heap below live objects, where its
own trimming (the heap's top only) never reaches. ``malloc_trim`` hands those pages back.
And before anything loads, glibc's malloc is set for a process that lives for weeks
(:func:`configure`): one arena, not one per thread that ever allocated (the store's thread,
the search pool's, the embedder's, anyio's workers each held freed pages of their own), and
blocks from 128 KiB on mapped on their own and unmapped when freed (by default the first such
free raises that bar, and an embedding batch's buffers then stay in the heap). Together
6-10 MB of a daemon at 10,000 memories (``bench/daemon.py``); neither changes a result.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc

YOUNG = 10_000  # allocations between two collections of the youngest generation
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8  # mallopt's parameters (malloc.h)
MMAP_THRESHOLD = 128 * 1024
ARENAS = 1


def configure() -> bool:
    """Set glibc's malloc for a long-lived process (see above); False where this C library has
    no ``mallopt``, or refused a setting."""
    if (mallopt := getattr(_libc(), "mallopt", None)) is None:
        return False
    return bool(mallopt(_M_ARENA_MAX, ARENAS)) & bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def settle() -> int:
    """Freeze what exists now, space the young collections out and give the freed heap back
    to the system; the objects frozen."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, *gc.get_threshold()[1:])
    trim()
    return gc.get_freeze_count()


def trim() -> bool:
    """Return the C heap's free pages to the system (glibc); False where there is no
    ``malloc_trim`` (another C library), which only means the pages stay with the process."""
    if (malloc_trim := getattr(_libc(), "malloc_trim", None)) is None:
        return False
    malloc_trim(0)
    return True


async def after_iteration() -> bool:
    """:func:`trim`, as the supervisor calls it after each iteration (well under 1 ms): what an
    iteration made and dropped goes back to the system, not only what start-up did."""
    return trim()


@functools.cache
def _libc() -> ctypes.CDLL | None:
    # Once: find_library runs `ldconfig -p` in a child process, and trim runs every iteration.
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name) if name else None
