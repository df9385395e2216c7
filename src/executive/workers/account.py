"""The worker account of ``user`` mode: one run at a time on this host, nothing of it left after.

At a run's end every process of the account is ended, not only those that carry the run's
mark (a process that detaches and clears its environment carries nothing, and used to live
on and write into the next bundle's folder). So that this never ends another run's
processes, a run holds the account for as long as it lasts: an exclusive lock on
``/run/executive/worker-<uid>.lock``, which every executive on this host takes (``user``
mode needs a root daemon; the folder is root's). Another run as the same account, of this
executive or another one, waits for it. A process of the account that is no worker's (a
system service running as ``nobody``) would be ended too: give workers an account of their
own, and ``doctor`` warns when the account has processes running.
"""

from __future__ import annotations

import fcntl
import os
import signal
import stat
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from executive.logs import get_logger

log = get_logger(__name__)

LOCK_FOLDER = Path("/run/executive")
POLL_SECONDS = 0.5


@asynccontextmanager
async def held(uid: int, label: str = "") -> AsyncIterator[None]:
    """The account is this run's alone while this lasts (waiting for another run to end)."""
    fd = await anyio.to_thread.run_sync(_open_lock, uid)
    try:
        waiting = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not waiting:
                    log.info("worker.account_busy", uid=uid, contract_id=label)
                    waiting = True
                await anyio.sleep(POLL_SECONDS)
        yield
    finally:
        os.close(fd)  # and with it the lock


def _open_lock(uid: int) -> int:
    """The lock file, in a folder only root may write (a planted file or link is refused)."""
    LOCK_FOLDER.mkdir(mode=0o755, exist_ok=True)
    info = LOCK_FOLDER.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise PermissionError(f"{LOCK_FOLDER} is not a folder only root may write; refusing it")
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(LOCK_FOLDER / f"worker-{uid}.lock", flags, 0o600)


def processes(uid: int, *, zombies: bool = False) -> list[int]:
    """Processes whose real, effective, saved or file uid is ``uid`` (zombies if asked)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            lines = (entry / "status").read_text().splitlines()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in lines if ":" in line)
        uids = fields.get("Uid", "").split()
        dead = fields.get("State", "").strip().startswith("Z")
        if str(uid) in uids and (zombies or not dead):
            found.append(int(entry.name))
    return found


async def wait_empty(uid: int, grace: float) -> list[int]:
    """Wait (within ``grace``) until no process of ``uid`` is left, zombies included: a zombie
    still counts against the account's RLIMIT_NPROC until its parent (init, for a killed
    worker's orphans) reaps it, and nothing tells when. Returns the processes still alive."""
    with anyio.move_on_after(grace):
        # Polled: no event says "reaped" (a pidfd turns readable at the exit, before it).
        while True:
            if not await anyio.to_thread.run_sync(lambda: processes(uid, zombies=True)):
                break
            await anyio.sleep(0.05)
    return await anyio.to_thread.run_sync(processes, uid)


def can_enter(uid: int, gid: int, folder: Path) -> bool:
    """Whether the account may list ``folder`` or pass through it (and so read the files in
    it that are readable to others), asked as the account itself (ACLs and all)."""
    done = subprocess.run(
        ["/bin/sh", "-c", 'test -x "$1" || test -r "$1"', "sh", str(folder)],
        user=uid,
        group=gid,
        extra_groups=[],
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
    return done.returncode == 0


async def signal_all(uid: int, gid: int, signum: signal.Signals) -> None:
    """``kill(-1, signum)`` as the account: all of its processes in one call, which a process
    forking at that moment cannot slip past (the kernel holds new forks back meanwhile)."""
    await anyio.run_process(
        ["/bin/sh", "-c", f"kill -s {signum.name.removeprefix('SIG')} -- -1"],
        user=uid,
        group=gid,
        extra_groups=[],
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},  # never the daemon's: other processes of it may read it
        stdin=subprocess.DEVNULL,
        check=False,
    )
