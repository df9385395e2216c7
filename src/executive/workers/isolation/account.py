"""The worker account of ``user`` mode: one run at a time, nothing of it left afterwards.

At a run's end every process of the account is ended, not only those of the run's tree or
with its mark: a process that detaches and clears its environment would otherwise outlive
the run, and every bundle's output folder belongs to that same account. The account's
processes are killed by ``kill(-1, SIGKILL)`` from a helper running as the account, which
the kernel applies to all of them at once (a fork cannot slip between two signals).

Ending every process of an account is right only while no other run uses it. So a run holds
an exclusive lock on the account (``/run/executive/account-<uid>.lock``, root's, mode 0600)
from its start to that sweep: two executives on one host that share a worker account take
turns, and neither ever ends the other's live worker. The account is the workers' alone:
anything else running as it is ended at each run's end (README, Security).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from executive import files
from executive.logs import get_logger
from executive.workers.isolation import tree

log = get_logger(__name__)

LOCK_DIR = Path("/run/executive")
POLL_SECONDS = 0.5
HELPER_TIMEOUT_SECONDS = 30.0
REAP_POLL_SECONDS = 0.02


def try_lock(uid: int) -> int | None:
    """The locked file's fd, or None while another run of the account holds it."""
    with contextlib.suppress(FileExistsError):
        LOCK_DIR.mkdir(mode=0o700, parents=True)
    return files.try_lock(LOCK_DIR / f"account-{uid}.lock")


@contextlib.asynccontextmanager
async def held(uid: int, label: str) -> AsyncIterator[None]:
    """The account, for one run: waits while another run (another executive's) has it."""
    fd = try_lock(uid)
    if fd is None:
        log.warning("worker.account_busy", uid=uid, contract_id=label)
    while fd is None:
        await anyio.sleep(POLL_SECONDS)
        fd = try_lock(uid)
    try:
        yield
    finally:
        os.close(fd)  # closing the last fd releases the lock


def processes(uid: int, *, orphaned_dead: bool = False) -> list[int]:
    """Live processes whose real, effective or saved uid is ``uid``; or with
    ``orphaned_dead``, its dead ones that wait for init to reap them."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if str(uid) not in fields.get("Uid", "").split()[:3]:
            continue
        dead = fields.get("State", "").strip().startswith("Z")
        if dead == orphaned_dead and (not dead or fields.get("PPid", "").strip() == "1"):
            found.append(int(entry.name))
    return found


def sweep(uid: int, gid: int) -> list[int]:
    """End every process of the account and wait until they are gone; returns survivors.

    Blocking: the loop runs it in a thread, start-up directly. The caller holds the lock.
    """
    try:
        subprocess.run(
            ["/bin/sh", "-c", "kill -9 -1"],  # every process the account may signal but this
            user=uid,
            group=gid,
            extra_groups=[],
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=HELPER_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.error("worker.account_sweep_failed", uid=uid, error=str(exc))
    pinned = tree.pin_pids(processes(uid))
    try:
        survivors = tree.kill_pinned(pinned, uid=uid)  # those the helper could not reach
    finally:
        for fd in pinned:
            os.close(fd)
    _reaped(uid)
    return survivors


def _reaped(uid: int) -> None:
    """Wait (a grace at most) until init has reaped the account's dead: until then they count
    against its ``RLIMIT_NPROC``, and the next run could not start its processes. (systemd
    reaps at once; some container inits only every second or two.)"""
    deadline = time.monotonic() + tree.GRACE_SECONDS
    while (left := processes(uid, orphaned_dead=True)) and time.monotonic() < deadline:
        time.sleep(REAP_POLL_SECONDS)
    if left:
        log.warning("worker.account_unreaped", uid=uid, processes=len(left))


def sweep_if_idle(uid: int, gid: int) -> bool:
    """At start-up: end what a killed daemon's runs left, unless another run holds the account."""
    fd = try_lock(uid)
    if fd is None:
        return False
    try:
        sweep(uid, gid)
    finally:
        os.close(fd)
    return True
