"""Every write a store in the home confirmed survives a SIGKILL of its process, and a second
process cannot open it while the first holds it: the embedded store and the in-memory one."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from executive.memory.store.base import Filter
from tests.conftest import REPO, clean_env
from tests.memory.conftest import open_store

pytestmark = pytest.mark.anyio

BACKENDS = [pytest.param("local", marks=pytest.mark.store), "inmemory"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_confirmed_writes_survive_a_sigkill(tmp_path, backend):
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.memory.store.killed_writer", str(tmp_path), "60", backend],
        cwd=REPO,
        env=clean_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    confirmed: list[str] = []
    for line in writer.stdout:
        if re.fullmatch(r"[0-9a-f-]{36}", line.strip()):
            confirmed.append(line.strip())
        if len(confirmed) == 60:
            break
    writer.kill()  # SIGKILL: no close, no flush
    writer.wait(30)
    assert len(confirmed) == 60

    store = await open_store(tmp_path, backend)  # the lock died with the process
    try:
        assert await store.count(Filter(user_id="agent-test")) == 60
        for memory_id in confirmed:
            record = await store.get(memory_id)
            assert record is not None and record.text.startswith("Killed writer memory")
        assert [h["event"] for h in await store.history(confirmed[-1])] == ["ADD"]
    finally:
        await store.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_second_process_cannot_open_a_store_in_use(tmp_path, backend):
    store = await open_store(tmp_path, backend)
    try:
        other = subprocess.run(
            [
                sys.executable,
                "-c",
                "import anyio, sys; from pathlib import Path; "
                "from tests.memory.conftest import open_store; "
                "anyio.run(open_store, Path(sys.argv[1]), sys.argv[2])",
                str(tmp_path),
                backend,
            ],
            cwd=REPO,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert other.returncode != 0
        assert "cannot open the embedded store" in other.stderr or (
            "held by another process" in other.stderr
        )
    finally:
        await store.close()
