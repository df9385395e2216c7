"""Store adapters behind one interface: ``local`` (embedded mem0 OSS) and ``platform``."""

from executive.memory.store.base import (
    Filter,
    MemoryRecord,
    ReadView,
    Store,
    StoreError,
    StoreReader,
    WriteReceipt,
)

__all__ = [
    "Filter",
    "MemoryRecord",
    "ReadView",
    "Store",
    "StoreError",
    "StoreReader",
    "WriteReceipt",
]
