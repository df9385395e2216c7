"""The store: one interface (``base``) over the backends of ``backends``.

What the rest of the daemon uses is named here: nothing outside asks which backend a store
is, only which of the optional powers (``CAPABILITIES``) it has. The set-up tools, which
export the models the local backends embed with, reach ``embedder`` and ``ortenv``
themselves (importing them here would load numpy into every command).
"""

from executive.memory.store.base import (
    CAPABILITIES,
    Filter,
    MemoryRecord,
    ReadView,
    StoreError,
    StoreReader,
    StoreUnavailable,
    Words,
    missing,
)

__all__ = [
    "CAPABILITIES",
    "Filter",
    "MemoryRecord",
    "ReadView",
    "StoreError",
    "StoreReader",
    "StoreUnavailable",
    "Words",
    "missing",
]
