"""A separate process that harvests one payload at a time, so a test can SIGKILL it mid-way.

    python -m tests.memory.writer HOME COUNT FAIL_FIRST
The first FAIL_FIRST writes meet a store that is down.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import HarvestLedger
from tests.memory.conftest import open_store
from tests.memory.faults import FaultyStore
from tests.memory.payloads import DEFAULTS, partial


async def main(home: Path, count: int, fail_first: int) -> None:
    store = await open_store(home)
    faulty = FaultyStore(store)
    harvester = Harvester(faulty, HarvestLedger(home / "ledger"), DEFAULTS)
    for i in range(count):
        faulty.mode = "raise" if i < fail_first else None
        text = f"Write {i}: bundle w{i % 3} learned that step {i} needs flag --x{i}."
        result = await harvester.add([partial("semantic", text=text)], near_duplicates=False)
        print(f"{i} {result.results[0].status}", flush=True)
        await anyio.sleep(0.05)
    await store.close()


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
