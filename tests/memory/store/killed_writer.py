"""A writer to kill: adds memories one by one to a real store and prints each confirmed id.

python -m tests.memory.store.killed_writer ROOT COUNT [local|inmemory]
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from executive.memory.store.base import NewMemory
from tests.memory.conftest import meta, open_store, scope


async def main(root: Path, count: int, backend: str) -> None:
    store = await open_store(root, backend)
    for i in range(count):
        receipt = await store.add(NewMemory(f"Killed writer memory {i}.", scope(), meta(i)))
        print(receipt.memory_id, flush=True)  # confirmed: the store said SUCCEEDED
    await anyio.sleep_forever()  # never closes (no flush): the parent kills it


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1]), int(sys.argv[2]), (sys.argv[3:] or ["local"])[0])
