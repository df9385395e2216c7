"""Who is on the other end of the control socket, and whether it may be served.

The socket serves the operator's CLI and the LLM engine's agent, never a worker. The kernel
says who connected (``SO_PEERCRED``: pid, uid, gid at ``connect()``, in our namespaces); a
pidfd pins that process so a recycled pid is never judged in its place. A peer is refused
when it is another user, when it lives in other pid or user namespaces than ours (a
bubblewrap sandbox: it cannot leave them), or when it belongs to a worker: its environment
carries a worker's run mark, or its process group or session is a live worker's, or a
worker is among its ancestors. These last checks are weak by nature (``env -i``, ``setsid``
and a double fork together escape them): they are what is left in isolation mode ``none``,
where the worker is the daemon's own user.

Workers register here when they start (``workers.isolation.process``) and the socket server
(``surface.control``) asks here; neither imports the other. A worker can connect before its
pid is known (starting one awaits, and the loop serves meanwhile), so it starts inside
:func:`spawning`, and no peer is judged until every worker being started is registered.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio

SO_PEERPIDFD = 77  # Linux >= 6.5 (x86-64, arm64); Python 3.11 has no constant for it
_CRED = struct.Struct("3i")
WORKER_MARK = b"GOAL_CONTRACT="  # in every worker's environment (workers.isolation.tree.MARK)
_workers: set[int] = set()  # pids of live worker roots (each leads its own group and session)


@dataclass(frozen=True)
class Peer:
    pid: int
    uid: int
    gid: int


register = _workers.add
unregister = _workers.discard

_starting = 0  # workers being started, not yet registered
_started: anyio.Event | None = None  # set when none is


@contextlib.contextmanager
def spawning() -> Iterator[None]:
    """Around starting a worker and registering its pid: peers wait to be judged till then."""
    global _starting, _started
    if _starting == 0:
        _started = anyio.Event()
    _starting += 1
    try:
        yield
    finally:
        _starting -= 1
        if _starting == 0 and _started is not None:
            _started.set()


async def settled() -> None:
    """Return once no worker is being started: every live worker is registered."""
    while _starting and _started is not None:
        await _started.wait()


def pidfd(sock: socket.socket, pid: int) -> int | None:
    """A pidfd for the peer: from the socket where the kernel offers it, else by pid."""
    with contextlib.suppress(OSError):
        return int.from_bytes(sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD, 4), "little")
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def refusal(sock: socket.socket) -> str | None:
    """None when the peer may be served; otherwise why not (a refused peer gets only that)."""
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size)
    except OSError as exc:
        return f"peer credentials unreadable: {exc}"
    peer = Peer(*_CRED.unpack(raw))
    if peer.pid <= 0:
        return "peer has no process (not a local Unix socket peer)"
    fd = pidfd(sock, peer.pid)
    if fd is None:
        return "peer process is gone"
    try:
        why = judge(peer)
        # Still the same process? Otherwise /proc described a recycled pid.
        try:
            signal.pidfd_send_signal(fd, 0)
        except ProcessLookupError:
            return "peer process is gone"
        return why
    finally:
        os.close(fd)


def judge(peer: Peer) -> str | None:
    if peer.uid != os.getuid():
        return f"peer uid {peer.uid} is not the daemon's ({os.getuid()})"
    for ns in ("pid", "user"):
        try:
            theirs = Path(f"/proc/{peer.pid}/ns/{ns}").readlink()
            ours = Path(f"/proc/self/ns/{ns}").readlink()
        except OSError as exc:
            return f"peer namespaces unreadable: {exc.strerror}"
        if theirs != ours:
            return f"peer runs in another {ns} namespace (a worker sandbox)"
    try:
        environ = Path(f"/proc/{peer.pid}/environ").read_bytes().split(b"\0")
    except OSError as exc:
        return f"peer environment unreadable: {exc.strerror}"
    if any(v.startswith(WORKER_MARK) for v in environ):
        return "peer carries a worker's run mark (GOAL_CONTRACT) in its environment"
    live = frozenset(_workers)
    pid, seen = peer.pid, 0
    while pid > 1 and seen < 256:
        fields = stat(pid)
        if fields is None:
            return "peer process is gone" if pid == peer.pid else None
        ppid, pgrp, session = int(fields[1]), int(fields[2]), int(fields[3])
        if pid in live or pgrp in live or session in live:
            return "peer belongs to a worker's process tree, group or session"
        pid, seen = ppid, seen + 1
    return None


def stat(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` past the command name (which may hold ")"): [0] state, [1] ppid,
    [2] pgrp, [3] session, [19] start time; None if the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
