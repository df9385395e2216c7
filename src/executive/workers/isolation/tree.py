"""Finding and ending a worker's whole process tree.

A process group alone is not enough (a worker can ``setsid``), and killing a shell leaves a
pipeline's stages alive holding its output pipe. The descendants are found through
``/proc/<pid>/task/*/children``, the group through ``/proc/*/stat``, and escapees (``setsid``
plus a double fork) by the run's mark in their environment, and where the run has a cgroup,
by its member list (which a cleared environment does not leave); each is pinned with a pidfd, so
a recycled pid is never signalled, and a pidfd turning readable says its process has exited.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from pathlib import Path

from executive import peers
from executive.logs import get_logger

log = get_logger(__name__)

# Set in every worker's environment to its contract id: how a lost process is found again.
MARK = "GOAL_CONTRACT"
GRACE_SECONDS = 5.0


def children(pid: int) -> list[int]:
    found = []
    try:
        tasks = [t.name for t in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return []
    for task in tasks:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def pin(root: int) -> list[int]:
    """pidfds for every live descendant of ``root`` (not ``root`` itself: we hold it)."""
    fds, seen, todo = [], {root}, children(root)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            fds.append(os.pidfd_open(pid))
        except OSError:
            continue
        todo += children(pid)
    return fds


def pin_pids(pids: list[int], skip: int | None = None) -> list[int]:
    """pidfds for ``pids`` still alive (a run cgroup's members), ``skip`` left out."""
    fds = []
    for pid in pids:
        if pid != skip:
            with contextlib.suppress(OSError):
                fds.append(os.pidfd_open(pid))
    return fds


def pin_group(pgid: int) -> list[int]:
    """pidfds for processes still in group ``pgid`` (orphans that left the tree)."""
    fds = []
    for entry in (p.name for p in Path("/proc").iterdir()):
        if not entry.isdigit() or int(entry) == pgid:
            continue
        fields = peers.stat(int(entry))
        if fields is not None and int(fields[2]) == pgid and fields[0] != "Z":
            with contextlib.suppress(OSError):
                fds.append(os.pidfd_open(int(entry)))
    return fds


def pidfd_signal(fd: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        signal.pidfd_send_signal(fd, signum)


def pidfd_pid(fd: int) -> int | None:
    try:
        for line in Path(f"/proc/self/fdinfo/{fd}").read_text().splitlines():
            if line.startswith("Pid:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
        os.killpg(pgid, signum)


def pin_marked(contract_id: str) -> list[int]:
    """pidfds for live processes whose environment carries ``MARK=<contract_id>``."""
    needle = f"{MARK}={contract_id}".encode()
    fds = []
    for entry in (p.name for p in Path("/proc").iterdir()):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            with contextlib.suppress(OSError):
                fds.append(os.pidfd_open(int(entry)))
    return fds


def end_orphan(pid: int | None, pgid: int, marked: list[int]) -> None:
    pinned = list(marked)
    if pid is not None:
        with contextlib.suppress(OSError):
            pinned.append(os.pidfd_open(pid))
        pinned += pin(pid) + pin_group(pgid)
    try:
        if pid is not None:
            signal_group(pgid, signal.SIGTERM)
        for fd in pinned:
            pidfd_signal(fd, signal.SIGTERM)
        if pinned:
            select.select(pinned[:1], [], [], GRACE_SECONDS)  # the root exits, or the grace ends
        if pid is not None:
            pinned += pin(pid) + pin_group(pgid)
            signal_group(pgid, signal.SIGKILL)
        kill_pinned(pinned)
    finally:
        for fd in pinned:
            os.close(fd)


def kill_pinned(pinned: list[int], **context: object) -> list[int]:
    """SIGKILL every pinned process and wait (a grace each) until it has exited; returns the
    pids of those still alive, each logged with ``context``. The caller closes the pidfds."""
    survivors = []
    for fd in pinned:
        pidfd_signal(fd, signal.SIGKILL)
    for fd in pinned:
        if not select.select([fd], [], [], GRACE_SECONDS)[0]:
            survivors.append(pidfd_pid(fd))
            log.error("worker.survivor", pid=survivors[-1], **context)
    return [p for p in survivors if p is not None]
