"""The worker account of user mode: held by one run at a time, and emptied at its end."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess

import pytest

from executive.workers import account, sandbox

IDS = sandbox.account_ids("nobody")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(os.geteuid() != 0 or IDS is None, reason="needs root and nobody"),
]


async def test_a_run_holds_the_account_against_every_other_run_on_this_host():
    assert IDS is not None
    lock = account.LOCK_FOLDER / f"worker-{IDS[0]}.lock"
    async with account.held(IDS[0], "first"):
        other = os.open(lock, os.O_RDWR)  # as another executive would open it
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
    other = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free once the run is over
    finally:
        os.close(other)
    assert (account.LOCK_FOLDER.stat().st_mode & 0o022, account.LOCK_FOLDER.stat().st_uid) == (0, 0)


async def test_every_process_of_the_account_is_ended_however_it_left():
    assert IDS is not None
    # Detached, in a session of its own, with an empty environment: nothing marks it.
    script = "env -i setsid sleep 600 </dev/null >/dev/null 2>&1 &"
    subprocess.run(
        ["sh", "-c", script], user=IDS[0], group=IDS[1], extra_groups=[], cwd="/", check=True
    )
    assert account.processes(IDS[0])
    await account.signal_all(*IDS, signal.SIGKILL)
    assert await account.wait_empty(IDS[0], 10) == []
