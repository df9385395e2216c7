"""One daemon per home: the lock a running daemon holds, and that offline operations take."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from executive.home import Home


class AlreadyRunning(RuntimeError):
    pass


@contextmanager
def daemon_lock(home: Home) -> Iterator[None]:
    """An flock on the pid file, released by the kernel on any exit."""
    home.ensure_state()
    fd = os.open(home.daemon_pid, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise AlreadyRunning(
                f"another executive daemon (pid {holder}) is running on {home.root}"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)
