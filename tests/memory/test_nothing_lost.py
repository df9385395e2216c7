"""No write is ever lost: a store that is down for a while, and a writer killed mid-way."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from executive.memory.write.harvester import Harvester
from executive.memory.write.ledger import HarvestLedger
from tests.conftest import REPO, clean_env
from tests.memory.conftest import open_store
from tests.memory.payloads import DEFAULTS

pytestmark = pytest.mark.anyio


async def test_every_write_lands_exactly_once_after_an_outage_and_a_kill(tmp_path):
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.memory.writer", str(tmp_path), "40", "8"],
        cwd=REPO,
        env=clean_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    seen = []
    for line in writer.stdout:
        if not re.match(r"^\d+ [A-Z]+$", line.strip()):
            continue  # a log line
        seen.append(line.split())
        if len(seen) == 15:  # eight failed during the outage, seven landed: kill it now
            writer.kill()
            break
    writer.wait(30)
    assert [s for _, s in seen[:8]] == ["ERROR"] * 8
    assert {s for _, s in seen[8:15]} == {"SUCCEEDED"}

    ledger = HarvestLedger(tmp_path / "ledger")
    attempted = set(ledger.state().keys)
    assert len(attempted) >= 15  # the killed attempt may or may not have its PENDING line
    store = await open_store(tmp_path)
    try:
        harvester = Harvester(store, ledger, DEFAULTS)
        replay = await harvester.replay()
        assert replay["still_pending"] == 0 and replay["pending"] >= 8
        assert await harvester.replay() == {"pending": 0, "confirmed": 0, "still_pending": 0}
        records = await store.list(None)
        keys = [r.key for r in records]
        assert len(keys) == len(set(keys)), "no write is stored twice"
        assert set(keys) == set(ledger.state().live()) == attempted, "no write is lost"
    finally:
        await store.close()
