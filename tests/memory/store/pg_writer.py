"""A real writer process on the Postgres store, for the kill and race tests.

python -m tests.memory.store.pg_writer URL MEM0_DIR kill COUNT
    adds COUNT memories one by one, prints each confirmed id, then waits to be killed.
python -m tests.memory.store.pg_writer URL MEM0_DIR race TEXT KEY
    opens the store and builds mem0, prints "ready", waits for a line on stdin, then adds
    TEXT under KEY and prints the receipt as JSON: the parent releases two at once.

MEM0_DIR is mem0's folder, in the test's own: a killed writer cannot remove one of its own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio

from executive.logs import configure_logging
from executive.memory.store.base import NewMemory
from executive.memory.store.postgres import PostgresStore
from tests.memory.conftest import meta, scope


async def main(url: str, mem0_dir: str, mode: str, *args: str) -> None:
    configure_logging(fmt="json", level="warning", stream=sys.stderr)  # stdout is the answer
    store = await PostgresStore.open(url, Path(mem0_dir))
    if mode == "kill":
        for i in range(int(args[0])):
            receipt = await store.add(NewMemory(f"Killed writer memory {i}.", scope(), meta(i)))
            assert receipt.confirmed, receipt
            print(receipt.memory_id, flush=True)
        await anyio.sleep_forever()  # never closes: the parent kills it
    text, key = args
    await store.count()  # the schema, then mem0: nothing left to build after "go"
    await store._call("warm", store._mem0)
    print("ready", flush=True)
    await anyio.to_thread.run_sync(sys.stdin.readline)
    receipt = await store.add(NewMemory(text, scope(), meta(0, key=key)))
    print(json.dumps({"status": receipt.status, "memory_id": receipt.memory_id}), flush=True)
    await store.close()


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:])
