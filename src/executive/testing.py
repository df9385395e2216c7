"""What a test of code built on executive imports (as ``structlog.testing`` is structlog's).

:class:`InMemoryStore` is a real :class:`~executive.memory.store.base.Store`: the embedded
store's contract (filters, listing order, history, revision, the word index) and its
durability (a journal, fsync-ed before a write is confirmed), with vectors from a
deterministic hash, so a test needs no model, no mem0 and no clock. It is the store behind
``EXECUTIVE_STORE=inmemory`` and the fake the project's own tests use where the store is not
the point.
"""

from __future__ import annotations

from executive.memory.store.inmemory import JOURNAL, InMemoryStore

__all__ = ["JOURNAL", "InMemoryStore"]
