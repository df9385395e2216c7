"""The store: one interface (``base``) over the backends the daemon can keep memory in.

``backends`` is the table of them, a name to how it opens (``local``: embedded mem0 OSS;
``postgres``; ``platform``: the mem0 Platform; ``inmemory``: the journaled fake of
:mod:`executive.testing`). What the rest of the daemon uses is named here: nothing outside
asks which backend a store is, only which of the optional powers (``CAPABILITIES``) it has.
The set-up tools, which export the models the local backends embed with, reach ``embedder``
and ``ortenv`` themselves (importing them here would load numpy into every command).
"""

from executive.memory.store.base import (
    CAPABILITIES,
    Filter,
    MemoryRecord,
    ReadView,
    Store,
    StoreError,
    StoreReader,
    StoreUnavailable,
    Words,
    WriteReceipt,
    missing,
)

__all__ = [
    "CAPABILITIES",
    "Filter",
    "MemoryRecord",
    "ReadView",
    "Store",
    "StoreError",
    "StoreReader",
    "StoreUnavailable",
    "Words",
    "WriteReceipt",
    "missing",
]
