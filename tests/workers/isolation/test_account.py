"""User mode's worker account: one run at a time, and every process of it ended after."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import tempfile
from pathlib import Path

import anyio
import pytest

from executive.workers.isolation import account, sandbox
from tests.fifo import Fifo

IDS = sandbox.account_ids("nobody")
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0 or IDS is None, reason="needs root and the nobody account")
]


@pytest.mark.anyio
async def test_while_a_run_holds_the_account_no_other_can_take_it():
    assert IDS is not None
    # held() waits its turn: other tests' user-mode runs take the same account meanwhile.
    async with account.held(IDS[0], "test"):
        assert account.try_lock(IDS[0]) is None  # another executive's run would wait here


def test_the_sweep_ends_a_detached_process_with_a_cleared_environment():
    assert IDS is not None
    # Where the account can write: outside root's private test folders.
    scratch = Path(tempfile.mkdtemp(prefix="executive-account-", dir="/var/tmp"))
    scratch.chmod(0o711)
    try:
        with Fifo(scratch / "pid", owner=IDS) as pid:
            _sweep_ends_what(pid)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _sweep_ends_what(pid: Fifo) -> None:
    assert IDS is not None
    # It leaves the session and clears its environment; the shell that started it exits,
    # so init adopts it: no tree, group or run mark leads to it. It says its pid once it is
    # on its own.
    subprocess.run(
        ["sh", "-c", f"setsid env -i sh -c 'echo $$ > {pid.path}; exec sleep 702' &"],
        user=IDS[0],
        group=IDS[1],
        extra_groups=[],
        cwd="/",
        check=True,
    )
    pinned = os.pidfd_open(int(pid.line(timeout=30)))
    try:
        assert not select.select([pinned], [], [], 0)[0]  # alive

        async def sweep() -> list[int]:
            async with account.held(IDS[0], "test"):
                return account.sweep(*IDS)

        assert anyio.run(sweep) == []
        assert select.select([pinned], [], [], 0)[0]  # gone once the sweep returned
    finally:
        os.close(pinned)
